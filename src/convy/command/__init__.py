"""The parts of the `convy` command (convy.cli): what each subcommand does, with the command's
streams; like the command, they use the engine only through its public names."""
