from tutor.launch import main

raise SystemExit(main())
