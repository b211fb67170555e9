"""A real ZooKeeper under kraftcheck (issue 31 item 5): the ZooKeeper model (``model/zookeeper.py``) checked against a
real server (``server.py``: start and stop Debian's ZooKeeper 3.8 on loopback; ``client.py``: sessions, operations,
watches and tree observation through kazoo; ``conform.py``: seeded operation sequences on both, the abstraction
function and the comparison after every step)."""
