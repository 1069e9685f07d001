"""`argus record`: run the user's command once with a hook that records every Triton launch.

- `hook.py`: the launch hook, loaded by path into the user's processes (standard library only);
- `runner.py`: runs the command with the hook (a generated `sitecustomize`), merges what each
  process recorded into one launch file, atomically and while the command runs;
- the launch file's format, reader and validator live in `analyzers/model/launch_file.py`
  (the checker reads it; nothing of the checker imports this package).
"""
