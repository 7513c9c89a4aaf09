"""The scene loader: mesh files and scene files into bodies made of convex pieces, each with
its OBB tree. Data flows one way: the loader makes bodies, the world moves them, the viewer
draws them."""
