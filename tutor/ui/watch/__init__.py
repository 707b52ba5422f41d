"""`tutor watch`: a small Textual app that re-checks an exercise on every save from your own editor
(its session, without a screen, is tutor/watch_session.py)."""
