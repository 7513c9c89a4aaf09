"""The simulation loop: bodies, the fixed-step world, contacts and their response."""
