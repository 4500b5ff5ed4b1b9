"""Scenarios drafted from recorded conversations (`convy draft`): traces, logs, chat logs and run
folders read where they enter, their model calls gathered into conversations, personal data masked,
and one replayable scenario file written for each."""
