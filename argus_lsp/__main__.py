"""`python -m argus_lsp ...` is the `argus` command (tests and editors use it without a PATH)."""

from argus_lsp.cli import main

raise SystemExit(main())
