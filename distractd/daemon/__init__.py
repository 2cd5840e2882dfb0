"""The long-running service: sockets, sessions, publishing, metrics, configuration, lifecycle."""
