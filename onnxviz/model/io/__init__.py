"""Reading model files safely and writing them so that nothing of the user's is lost."""
