"""People's own tools inside a workspace: the SSH server side (``rig ssh-proxy``), ssh config, ``rig
forward``, ``rig cp`` and ``rig open``. asyncssh is imported only here, and only by these commands."""
