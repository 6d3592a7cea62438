from onnxviz.cli import main

raise SystemExit(main())
