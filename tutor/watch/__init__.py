"""`tutor watch`: the learner edits in their own editor; every save of the exercise's file is
checked, and a pass moves on to the next exercise.

`session` and `watcher` are plain Python (no Textual, no torch); `screen` and `app` draw them.
"""
