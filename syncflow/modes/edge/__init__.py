"""Edge mode (the KCP-Edge syncer): a mailbox workspace paired with one p-cluster."""
