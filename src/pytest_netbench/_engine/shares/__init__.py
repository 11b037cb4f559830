"""Where a load's shares run: the driver that picks a loop for one share, worker processes
and the Dask transport, and the client-delay probes that run beside a share."""
