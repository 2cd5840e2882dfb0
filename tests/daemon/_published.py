"""What a subscriber of the daemon's output saw, in the form the daemon tests compare."""


def states_of(messages, stream):
    """The first publication of each window's state of ``stream``, in time order: republished
    copies, which carry ``age_s``, are dropped. ``messages`` are ``(kind, stream, message)``
    tuples as ``collect`` of the daemon fixture returns them."""
    seen = {}
    for kind, name, message in messages:
        if kind == "state" and name == stream and "age_s" not in message:
            seen.setdefault(message["t"], message)
    return [seen[t] for t in sorted(seen)]
