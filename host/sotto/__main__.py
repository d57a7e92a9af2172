from sotto.cli import main

raise SystemExit(main())
