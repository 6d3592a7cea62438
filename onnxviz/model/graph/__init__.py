"""What a model is: the index of its graphs, checks, operator schemas, tensors, figures, validation."""
