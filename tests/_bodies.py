"""Bodies for the world, contact and dynamics tests: boxes, balls and grounds with exact shapes."""

import numpy as np
import trimesh

import obbcollide as co
from app.scene.loader import mass_properties
from app.world.world import Body, pose_matrix
from obbcollide.shapes import HalfSpace, Hull, Sphere, box_hull


def ground_body(size=10.0, rot=None, name="ground"):
    """A static ground: the half-space y < 0 (drawn as a square of half side ``size``), turned by ``rot``."""
    v = np.array([[-size, 0, -size], [size, 0, -size], [size, 0, size], [-size, 0, size]], float)
    f = np.array([[0, 2, 1], [0, 3, 2]])
    return Body(name, v, f, co.OBBTree(v, f), pose_matrix(rot, (0, 0, 0)), (0.3, 0.3, 0.3), motion="static",
                shapes=[HalfSpace((0, 1, 0))])


def box_body(name, half, pos, motion="kinematic", velocity=(0, 0, 0), rot=None, density=1000.0):
    """A box of half extents ``half``; dynamic boxes get the mass properties of their mesh."""
    m = trimesh.creation.box(extents=2 * np.asarray(half, float))
    v, f = np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
    mass = mass_properties(v, f, density) if motion == "dynamic" else None
    return Body(name, v, f, co.OBBTree(v, f), pose_matrix(rot, pos), (0.5, 0.5, 0.5),
                velocity=np.asarray(velocity, float), motion=motion, shapes=[box_hull(half)], mass=mass)


def u_body(name, pos, rot=None, motion="kinematic", density=1000.0):
    """A U of three boxes (1 m wide, 1 m tall, 0.4 m deep, its bottoms level): three convex pieces;
    a dynamic U gets the mass properties of its surface (of none with ``density=None``: it is then
    dynamic to the contacts but never moves)."""
    parts = [((-0.4, 0, 0), (0.1, 0.5, 0.2)), ((0.4, 0, 0), (0.1, 0.5, 0.2)), ((0, -0.4, 0), (0.3, 0.1, 0.2))]
    meshes, shapes = [], []
    for c, h in parts:
        m = trimesh.creation.box(extents=2 * np.asarray(h))
        m.apply_translation(c)
        meshes.append(m)
        shapes.append(Hull.from_points(np.asarray(m.vertices)))
    m = trimesh.util.concatenate(meshes)
    v, f = np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
    mass = mass_properties(v, f, density) if motion == "dynamic" and density is not None else None
    return Body(name, v, f, co.OBBTree(v, f), pose_matrix(rot, pos), (0.5, 0.5, 0.5), motion=motion,
                shapes=shapes, mass=mass)


def ball_body(name, radius, pos, motion="dynamic", velocity=(0, 0, 0), density=1000.0):
    """A ball colliding as an exact sphere, with the mass properties of its tessellation."""
    m = trimesh.creation.icosphere(subdivisions=3, radius=radius)
    v, f = np.asarray(m.vertices, float), np.asarray(m.faces, np.int64)
    mass = mass_properties(v, f, density) if motion == "dynamic" else None
    return Body(name, v, f, co.OBBTree(v, f), pose_matrix(None, pos), (1, 1, 1), velocity=np.asarray(velocity, float),
                motion=motion, shapes=[Sphere(radius)], mass=mass)
