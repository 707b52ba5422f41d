"""What the tests share: fake runners and clocks (`fakes`), tiny courses (`courses`) and the
tmux pane that drives the real command (`tmux`). Imported as `support.*`: pytest puts tests/
on sys.path for tests/conftest.py."""
