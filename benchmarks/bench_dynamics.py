"""Rigid-body dynamics: step time of falling and settling boxes and concave bodies against pybullet, one run, medians.

Run: ``.venv/bin/python benchmarks/bench_dynamics.py [--quick] [--ground plane|box|mesh] [--budget S]
[--scene box100|box1000|u|mesh] [--steps]``

Scenes (issue 7's benchmark), the same for both contenders:

1. N = 100 and N = 1000 cubes of side 0.5 m (half 0.25, density 1000: 125 kg)
   in a loose grid of 4 layers, 1.2 m apart on every axis, the lowest layer's
   centres 1 m up, each with a small random yaw (|yaw| <= 0.2 rad, seeded),
   dropped on a static ground at rest. They land within the first second
   (the top layer falls ~0.94 s) and end as columns of up to 4 boxes.
2. N = 100 concave bodies: a U of three boxes (as ``tests/world/test_contacts.py``'s
   ``u_body``: 1 m wide, 1 m tall, 0.4 m deep), ours as three ``Hull`` pieces,
   pybullet's a compound of the same three ``GEOM_BOX``es, same mass, centre
   of mass and inertia; 4 layers, 1.5 m apart, small random yaw.
3. N = 100 convex-decomposed meshes (issue 7's "100 convex-decomposed meshes"):
   the project's concave meshes ``torus_knot.ply`` (scale 0.35), ``gear.ply``
   (0.7) and ``bowl.ply`` (0.4), each about 0.7 m across, knot and gear turned
   90 degrees about x so that they lie flat (the bowl opens upwards), in turn
   (body k is mesh k mod 3); cleaned as the scene loader does
   (``app.scene.mesh_io.load_mesh``) and cut by the project's pipeline,
   ``app.scene.pieces.convex_pieces(..., DecomposeSettings(method="vhacd",
   max_pieces=16), cache=True)`` (V-HACD on the first run, a few seconds a
   mesh, then the disk cache). Density 1000; mass, centre of mass and inertia
   tensor from the closed mesh (``app.scene.loader.mass_properties``), not from the
   pieces. 4 layers, 1.5 m apart, small random yaw. Ours: a :class:`Body` with
   ``pieces=`` (its shapes are the pieces' hulls). pybullet: the same hulls as
   one compound per mesh, ``createCollisionShapeArray([GEOM_MESH] * k,
   fileNames=[...])``, one Wavefront file per hull written to a temporary
   folder (pybullet 3.2.7's ``createCollisionShapeArray`` takes no
   ``vertices=``, only ``createCollisionShape`` does, and one shape per link
   would be a multibody); each ``GEOM_MESH`` child becomes a
   ``btConvexHullShape`` of the file's points, all of them children of one
   ``btCompoundShape``, which holds at most 16 children (more are dropped
   without a word: hence ``max_pieces=16``). Our inertia is a full tensor in
   model axes; pybullet takes a diagonal one in the inertial frame, so it gets
   the principal moments (eigenvalues) as ``localInertiaDiagonal`` and the
   principal axes (eigenvectors, made right-handed) as the inertial frame's
   rotation, ``baseInertialFrameOrientation``, with the centre of mass as
   ``baseInertialFramePosition``; pybullet then reports the pose of that
   frame, and the settle check maps the hulls' points through it.

Ours: :class:`app.world.world.World` (``dt = 1/60``, ``dynamics.iterations = 10``,
``exact=False``; the ground is ``tests/_bodies.ground_body()``, a half-space,
or with ``--ground box`` a static 200 x 1 x 200 m box hull), timed around
``world.step()``. Its phases, as the world measures them: ``world.stats["update"]``
(the motion: kinematic bodies, then the dynamics), ``["broad"]`` and ``["narrow"]``
(the detection that ends each step); "rest" is the step minus those three (the repair
of non-finite states, bookkeeping). Where the step runs as one compiled call
(:mod:`app.world.world_step`) the three come from clock readings inside it.

pybullet (``p.connect(p.DIRECT)``, ``setPhysicsEngineParameter(fixedTimeStep=1/60,
numSolverIterations=10)``), bodies by ``createMultiBody(..., useMaximalCoordinates=True)``,
the ground a ``GEOM_PLANE`` with normal +y (``--ground box``: a ``GEOM_BOX``
of the same size as ours), timed around ``p.stepSimulation()``. Matched to
ours: gravity (0, -9.81, 0); Bullet multiplies the two bodies' frictions, so
every body gets sqrt(0.5) and a contact 0.5 as ours (geometric mean of 0.5
and 0.5); restitution 0 on both; damping 0.01 linear, 0.05 angular per
second as our defaults; sleeping on for both (Bullet's deactivation and our sleeping
islands), or off for both with ``--no-sleep`` (``ACTIVATION_STATE_DISABLE_SLEEPING``, and
our sleep time set to infinity) to time the solver on a settled pile. Bullet deactivates an
island whose bodies have all been under 0.8 m/s and 1 rad/s for 2 s (``btRigidBody``'s
defaults, which pybullet keeps); ours under 0.05 m/s and 0.1 rad/s for 0.5 s. The settle check
reads the linear speed alone on both sides, so a body counts as at rest whether it sleeps or
only moves slowly.

Both engines run in this one process, so the heap reserve our ``World`` makes when it is built
(``app/world/memory.py``: glibc keeps freed memory, and 16 MB of written pages wait at the top of
the heap, so a step whose arrays grow takes no page faults) serves pybullet's allocations as well;
``OBBCOLLIDE_NO_HEAP_RESERVE=1`` runs both without it.

Ours runs its hull-pair batch and its solver islands on all of numba's threads (both cores
here) where a batch is big enough to pay for them (``obbcollide.threads``) unless ``--threads 1``;
pybullet 3.2.7's step is single-threaded. Report both. Beside the threaded world a second world
of ours steps on one thread (``numba.set_num_threads(1)`` around its step; the two take turns
going first), and table [4] compares the three, and whether our two worlds ended in the same
state bit for bit (they must: threads change no result). ``--busy N`` runs every scene again
with N busy processes (``python -c "while True: pass"``, killed at the end) beside the engines,
and table [4] gives each column's ratio to its own quiet median (ours threaded to ours on one
thread, quiet), and the median of each step's ratio to the same step quiet. On a machine of C
cores otherwise idle, N busy processes leave this process about ``C / (N + 1)`` of a core once
N + 1 > C (two thirds for 2 on 2 cores): the run prints the cores the busy processes and this
process used (CPU time over wall time), which says whether they did. A step shorter than the
scheduler's time slice mostly runs whole, and now and then waits a slice (a few ms); a step
longer than a slice takes about ``(N + 1) / C`` times its quiet time in any engine.

The two simulations step in turn in the same loop (ours, then pybullet's,
each timed alone), so a burst of load from other jobs on the machine hits
both. Reported: the median step time while falling (the first simulated
second) and once settled (seconds 4-5), the 25-75% range to show the noise,
the ratio ours / pybullet (< 1: ours is faster), and a settle check at the
end: the fraction of bodies slower than 0.05 m/s, the mean height of the
centres of mass, the lowest point of any body (negative: into the ground;
the points of its collision shapes: the box or U corners, the pieces' hull
vertices) and how many bodies sank more than 5 cm or fell through. Then one settled
step of the N = 1000 scene under cProfile, top 15 functions by tottime.

The half-space ground is paired with every moving body each step (it has no
AABB), one ``collide_shapes`` call per body from Python; ``--ground box``
puts the ground through the broad phase and the batched hull kernel instead,
so only the bodies near it are paired. ``--ground mesh`` makes the ground a
static triangle mesh, the route of a person's own static concave or open
mesh (a terrain, a room, a bowl): a flat floor at y = 0, 40 x 40 m of 80 x 80
cells, two triangles each (12,800 triangles, an open surface), ours a
:class:`obbcollide.shapes.TriMesh` body (its exact surface:
:func:`obbcollide.convex_mesh.collide_convex_trimesh_pairs`), pybullet's a
``GEOM_MESH`` of the same vertices and indices with
``GEOM_FORCE_CONCAVE_TRIMESH`` on a static body (a ``btBvhTriangleMeshShape``).

``--steps`` adds table [5], the fall window step by step: both engines' step times and the
contact points each solved in that step (ours: the points the dynamics took; pybullet:
``getContactPoints`` after its step, counted outside the timed calls), in runs of steps with
similar counts. It shows where the window's median falls: in free fall, while a layer rests on
the ground, while the next lands. (Our contacts are speculative: a pair gets its manifold, all
of its points, up to a step before the bodies meet; pybullet's box-on-plane manifold starts
with one point and gains more over the following steps.)

If the N = 1000 run of ours would take longer than ``--budget`` seconds of
wall time (projected after the first simulated second), both simulations stop
at 3 s and the settled window is seconds 2-3; this is printed.
"""

import argparse
import cProfile
import functools
import math
import os
import pstats
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import trimesh  # noqa: E402

import obbcollide as co  # noqa: E402
from app.scene.mesh_io import load_mesh  # noqa: E402
from app.scene.pieces import DecomposeSettings, convex_pieces  # noqa: E402
from app.scene.loader import mass_properties  # noqa: E402
from app.world.world import Body, World, pose_matrix, rotation  # noqa: E402
from obbcollide.shapes import Hull, TriMesh  # noqa: E402
from tests._bodies import box_body, ground_body  # noqa: E402

try:
    import pybullet as pb
except ImportError:  # pragma: no cover - the peer is optional
    pb = None

DT = 1.0 / 60.0
ITERATIONS = 10
HALF = 0.25           # box half side, m
DENSITY = 1000.0      # kg / m^3
SLEEP = True  # both sides sleep resting bodies (--no-sleep: neither)
FRICTION = 0.5        # per contact, both sides
DAMPING = (0.01, 0.05)  # linear, angular, per second (our defaults)
SLOW = 0.05           # m/s: "at rest"
SUNK = 0.05           # m: a body whose lowest point is deeper than this has sunk
GROUND_BOX = (100.0, 0.5, 100.0)  # half extents of the --ground box, top face at y = 0
FLOOR = (40.0, 80)  # the --ground mesh floor at y = 0: side (m), cells along a side
U_PARTS = [((-0.4, 0.0, 0.0), (0.1, 0.5, 0.2)), ((0.4, 0.0, 0.0), (0.1, 0.5, 0.2)),
           ((0.0, -0.4, 0.0), (0.3, 0.1, 0.2))]  # (centre, half extents) of the U's boxes, model frame
MESH_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets", "meshes")
# (file, scale, turn about x in degrees): the concave meshes of the "mesh" scene, ~0.7 m across, lying flat
MESHES = [("torus_knot.ply", 0.35, 90.0), ("gear.ply", 0.7, 90.0), ("bowl.ply", 0.4, 0.0)]
MESH_PIECES = 16  # V-HACD's max_pieces; also the most children a pybullet compound keeps


# ---------------------------------------------------------------------------
# The scene, shared
# ---------------------------------------------------------------------------


def grid(n, spacing, layers=4, seed=0, base=1.0):
    """``n`` start poses ``(position (3,), yaw)``: ``layers`` layers of a square grid, ``spacing``
    apart, the lowest at height ``base``, yaw uniform in [-0.2, 0.2] rad (seeded)."""
    rng = np.random.default_rng(seed)
    side = int(math.ceil(math.sqrt(n / layers)))
    out = []
    for k in range(n):
        layer, r = divmod(k, side * side)
        i, j = divmod(r, side)
        pos = np.array([(i - (side - 1) / 2) * spacing, base + layer * spacing, (j - (side - 1) / 2) * spacing])
        out.append((pos, float(rng.uniform(-0.2, 0.2))))
    return out


def u_mesh():
    """The U's surface (the three boxes, touching, not overlapping) and its three hulls."""
    meshes, hulls = [], []
    for c, h in U_PARTS:
        m = trimesh.creation.box(extents=2 * np.asarray(h))
        m.apply_translation(c)
        meshes.append(m)
        hulls.append(Hull.from_points(np.asarray(m.vertices, float)))
    m = trimesh.util.concatenate(meshes)
    return np.asarray(m.vertices, float), np.asarray(m.faces, np.int64), hulls


@functools.lru_cache(maxsize=None)
def floor_mesh():
    """The ``--ground mesh`` floor: ``(vertices (n, 3), faces (m, 3))``, the plane y = 0 cut into
    FLOOR's square cells, two triangles each, wound to face +y."""
    side, n = FLOOR
    xs = np.linspace(-side / 2, side / 2, n + 1)
    x, z = np.meshgrid(xs, xs)
    v = np.stack([x.ravel(), np.zeros(x.size), z.ravel()], axis=1)
    a = (np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]).ravel()  # each cell's corner at (i, j)
    f = np.concatenate([np.stack([a, a + n + 1, a + 1], 1), np.stack([a + 1, a + n + 1, a + n + 2], 1)])
    return v, f.astype(np.int64)


def mesh_models():
    """The "mesh" scene's models: a list of ``(name, vertices (n, 3), faces (m, 3), ConvexPieces,
    MassProperties)``, loaded, scaled, turned and decomposed once (V-HACD results cached on disk)."""
    out = []
    for name, scale, turn in MESHES:
        m = load_mesh(os.path.join(MESH_DIR, name), scale=scale)
        v = np.asarray(m.vertices, float) @ rotation((1, 0, 0), math.radians(turn)).T
        f = np.asarray(m.faces, np.int64)
        pieces = convex_pieces(v, f, DecomposeSettings(method="vhacd", max_pieces=MESH_PIECES), cache=True)
        if len(pieces) > MESH_PIECES:  # pragma: no cover - convex_pieces keeps to max_pieces
            raise RuntimeError(f"{name}: {len(pieces)} pieces, more than a pybullet compound holds")
        mass = mass_properties(v, f, DENSITY)
        if mass is None:
            raise RuntimeError(f"{name}: not a closed mesh, no mass properties")
        out.append((os.path.splitext(name)[0], v, f, pieces, mass))
    return out


def collision_points(body):
    """(k, 3) model-frame points of a body's collision shapes: its pieces' hull vertices, or its mesh."""
    if body.pieces is not None:
        return np.concatenate([h.vertices for h in body.pieces.hulls])
    return body.vertices


# ---------------------------------------------------------------------------
# Ours
# ---------------------------------------------------------------------------


def our_ground(kind):
    if kind == "plane":
        return ground_body(size=100.0)
    if kind == "mesh":
        v, f = floor_mesh()
        tree = co.OBBTree(v, f)
        return Body("ground", v, f, tree, np.eye(4), (0.5, 0.5, 0.5), motion="static", shapes=[TriMesh(tree)])
    return box_body("ground", GROUND_BOX, (0.0, -GROUND_BOX[1], 0.0), motion="static")


def our_world(kind, starts, ground):
    """A :class:`World` of the ground and dynamic ``kind`` ("box", "u" or "mesh") bodies at ``starts``."""
    bodies = [our_ground(ground)]
    if kind == "box":
        for k, (pos, yaw) in enumerate(starts):
            bodies.append(box_body(f"box{k}", (HALF,) * 3, pos, motion="dynamic", rot=rotation((0, 1, 0), yaw),
                                   density=DENSITY))
    elif kind == "mesh":
        models = [(name, v, f, co.OBBTree(v, f), pieces, mass) for name, v, f, pieces, mass in mesh_models()]
        for k, (pos, yaw) in enumerate(starts):
            name, v, f, tree, pieces, mass = models[k % len(models)]
            bodies.append(Body(f"{name}{k}", v, f, tree, pose_matrix(rotation((0, 1, 0), yaw), pos), (0.5, 0.5, 0.5),
                               motion="dynamic", pieces=pieces, mass=mass))
    elif kind == "u":
        v, f, hulls = u_mesh()
        tree = co.OBBTree(v, f)
        mass = mass_properties(v, f, DENSITY)
        for k, (pos, yaw) in enumerate(starts):
            bodies.append(Body(f"u{k}", v, f, tree, pose_matrix(rotation((0, 1, 0), yaw), pos), (0.5, 0.5, 0.5),
                               motion="dynamic", shapes=list(hulls), mass=mass))
    else:
        raise ValueError(f"kind: expected 'box', 'u' or 'mesh', got {kind!r}")
    w = World(bodies, dt=DT, exact=False, gravity=(0.0, -9.81, 0.0))
    w.dynamics.iterations = ITERATIONS
    w.dynamics.friction = FRICTION
    w.dynamics.linear_damping, w.dynamics.angular_damping = DAMPING
    return w


def our_state(w):
    """(n,) speeds, (n,) centre-of-mass heights, (n,) lowest points of the dynamic bodies."""
    dyn = [b for b in w.bodies if b.motion == "dynamic"]
    speed = np.array([np.linalg.norm(b.velocity) for b in dyn])
    com = np.array([(b.pose[:3, :3] @ b.mass.center + b.pose[:3, 3])[1] for b in dyn])
    low = np.array([float((collision_points(b) @ b.pose[1, :3]).min() + b.pose[1, 3]) for b in dyn])
    return speed, com, low


# ---------------------------------------------------------------------------
# pybullet
# ---------------------------------------------------------------------------


def yaw_quat(yaw):
    """pybullet quaternion (x, y, z, w) of a rotation by ``yaw`` about +y."""
    return [0.0, math.sin(yaw / 2), 0.0, math.cos(yaw / 2)]


def principal_frame(inertia):
    """``(moments (3,), quaternion (x, y, z, w))`` of a symmetric (3, 3) inertia tensor: its
    eigenvalues, and the rotation whose columns are its eigenvectors (right-handed), so that
    ``inertia = R @ diag(moments) @ R.T``: pybullet's ``localInertiaDiagonal`` and
    ``baseInertialFrameOrientation``."""
    from scipy.spatial.transform import Rotation

    moments, axes = np.linalg.eigh(np.asarray(inertia, float))
    if np.linalg.det(axes) < 0:
        axes[:, 0] = -axes[:, 0]
    return moments, Rotation.from_matrix(axes).as_quat()


def bullet_mesh_shape(pieces, folder, name, cid):
    """One ``btCompoundShape`` of the pieces' hulls: ``createCollisionShapeArray`` of ``GEOM_MESH``
    children, one Wavefront file of each hull's vertices and triangles written to ``folder``
    (pybullet reads the file and takes the convex hull of its points)."""
    files = []
    for i, h in enumerate(pieces.hulls):
        path = os.path.join(folder, f"{name}_{i}.obj")
        with open(path, "w") as fh:
            fh.writelines(f"v {x:.17g} {y:.17g} {z:.17g}\n" for x, y, z in h.vertices)
            fh.writelines(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in h.triangles)
        files.append(path)
    return pb.createCollisionShapeArray([pb.GEOM_MESH] * len(files), fileNames=files,
                                        meshScales=[[1.0, 1.0, 1.0]] * len(files), physicsClientId=cid)


def bullet_world(kind, starts, ground):
    """A DIRECT client with the ground and the bodies; returns ``(client, body ids, per body the
    (k, 3) points of its shapes in its inertial frame, for the lowest-point check)``."""
    cid = pb.connect(pb.DIRECT)
    pb.setGravity(0, -9.81, 0, physicsClientId=cid)
    pb.setPhysicsEngineParameter(fixedTimeStep=DT, numSolverIterations=ITERATIONS, numSubSteps=0,
                                 physicsClientId=cid)
    if ground == "plane":
        gshape = pb.createCollisionShape(pb.GEOM_PLANE, planeNormal=[0, 1, 0], physicsClientId=cid)
        gpos = [0, 0, 0]
    elif ground == "mesh":
        v, f = floor_mesh()
        gshape = pb.createCollisionShape(pb.GEOM_MESH, vertices=v.tolist(), indices=f.ravel().tolist(),
                                         flags=pb.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=cid)
        gpos = [0, 0, 0]
    else:
        gshape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(GROUND_BOX), physicsClientId=cid)
        gpos = [0, -GROUND_BOX[1], 0]
    g = pb.createMultiBody(0, gshape, basePosition=gpos, useMaximalCoordinates=True, physicsClientId=cid)
    pb.changeDynamics(g, -1, lateralFriction=math.sqrt(FRICTION), restitution=0.0, physicsClientId=cid)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    models = []  # (shape, mass, com, inertial frame quaternion, inertia diagonal or None, local points)
    if kind == "box":
        shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[HALF] * 3, physicsClientId=cid)
        models.append((shape, DENSITY * (2 * HALF) ** 3, np.zeros(3), [0, 0, 0, 1], None, corners * HALF))
    elif kind == "mesh":
        with tempfile.TemporaryDirectory(prefix="bench_dynamics_") as folder:
            for name, _, _, pieces, mp in mesh_models():
                shape = bullet_mesh_shape(pieces, folder, name, cid)
                moments, quat = principal_frame(mp.inertia)
                axes = np.array(pb.getMatrixFromQuaternion(quat)).reshape(3, 3)
                hull_points = np.concatenate([h.vertices for h in pieces.hulls])
                models.append((shape, mp.mass, mp.center, list(quat), list(moments), (hull_points - mp.center) @ axes))
    else:
        v, f, _ = u_mesh()
        mp = mass_properties(v, f, DENSITY)
        shape = pb.createCollisionShapeArray([pb.GEOM_BOX] * 3, halfExtents=[list(h) for _, h in U_PARTS],
                                             collisionFramePositions=[list(c) for c, _ in U_PARTS],
                                             physicsClientId=cid)
        # the U is symmetric about x = 0 and z = 0: its inertia is diagonal in the model axes
        models.append((shape, mp.mass, mp.center, [0, 0, 0, 1], list(np.diag(mp.inertia)),
                       (corners * 0.5 * [1.0, 1.0, 0.4]) - mp.center))  # bounding box corners: the lowest points
    ids, local = [], []
    for k, (pos, yaw) in enumerate(starts):
        shape, mass, com, frame, inertia, points = models[k % len(models)]
        b = pb.createMultiBody(mass, shape, basePosition=list(pos), baseOrientation=yaw_quat(yaw),
                               baseInertialFramePosition=list(com), baseInertialFrameOrientation=frame,
                               useMaximalCoordinates=True,
                               physicsClientId=cid)
        # changeDynamics with localInertiaDiagonal alone zeroes a maximal-coordinates body's mass
        # (it falls to NaN in one step; pybullet 3.2.7): give the mass again with it
        kw = {"mass": mass, "localInertiaDiagonal": inertia} if inertia is not None else {}
        pb.changeDynamics(b, -1, lateralFriction=math.sqrt(FRICTION), restitution=0.0,
                          linearDamping=DAMPING[0], angularDamping=DAMPING[1],
                          activationState=(pb.ACTIVATION_STATE_ENABLE_SLEEPING if SLEEP else
                                           pb.ACTIVATION_STATE_DISABLE_SLEEPING), physicsClientId=cid, **kw)
        ids.append(b)
        local.append(points)
    return cid, ids, local


def bullet_state(cid, ids, local):
    """As :func:`our_state`; pybullet reports the pose of the base's inertial frame (its centre of
    mass, its principal axes), in which ``local[k]`` gives body k's points."""
    speed, com, low = [], [], []
    for b, points in zip(ids, local):
        p, q = pb.getBasePositionAndOrientation(b, physicsClientId=cid)
        lin, _ = pb.getBaseVelocity(b, physicsClientId=cid)
        r = np.array(pb.getMatrixFromQuaternion(q)).reshape(3, 3)
        speed.append(float(np.linalg.norm(lin)))
        com.append(p[1])
        low.append(float((points @ r[1]).min() + p[1]))
    return np.array(speed), np.array(com), np.array(low)


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------


def label(r):
    """A result's scene name for the tables."""
    return f"{r['n']} " + {"box": "boxes", "u": "U shapes", "mesh": "meshes"}[r["kind"]]


def stats(x):
    """(median, p25, p75) in ms."""
    x = np.asarray(x) * 1e3
    return float(np.median(x)), float(np.percentile(x, 25)), float(np.percentile(x, 75))


def warm_up(kind, ground):
    """Load (or compile) the numba kernels on a small scene, so the timed run has none of it: the
    serial and the threaded drivers of the batch kernels (:mod:`obbcollide.threads`)."""
    from obbcollide.threads import forced

    w = our_world(kind, grid(8, 1.2, layers=2), ground)
    for k in range(40):
        with forced("threaded" if k % 2 else "serial"):
            w.step()
    # A body held by the mouse joint: the step then solves through the kernels of the composed
    # dynamics path, which a big pile takes too (more than 256 manifolds); not loaded here, they
    # loaded from the disk cache in the middle of the timed run (one 10-12 ms step of the U shapes).
    body = next(b for b in w.bodies if b.motion == "dynamic")
    centre = body.world_center()
    w.dynamics.grab_body(body, centre, centre + (0.05, 0.05, 0.0))
    for _ in range(2):
        w.step()
    w.dynamics.release()


def start_busy(n):
    """``n`` busy processes beside the benchmark: each a pure-Python spin loop in its own
    interpreter (``python -c "while True: pass"``), one core's worth of load each."""
    import subprocess

    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
            for _ in range(n)]


def cpu_use(procs, since=None):
    """CPU seconds of the processes ``procs`` (from ``/proc/<pid>/stat``; 0 where it cannot be read)
    and of this process, with the wall clock: ``(procs, self, wall)``. Given an earlier reading
    ``since``, the cores each used on average in between: ``(procs, self)``. The load average cannot
    show this: it follows the run queue over a minute, and a run lasts seconds."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    spent = 0.0
    for p in procs:
        try:
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            spent += (int(fields[11]) + int(fields[12])) / tick  # utime, stime (fields 14 and 15)
        except (OSError, IndexError, ValueError):
            pass
    now = (spent, time.process_time(), time.perf_counter())
    if since is None:
        return now
    wall = max(now[2] - since[2], 1e-9)
    return (now[0] - since[0]) / wall, (now[1] - since[1]) / wall


def stop_busy(procs):
    """End the processes of :func:`start_busy` (each by its own handle) and reap them."""
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def one_thread_step(w):
    """``w.step()`` on one numba thread (every batch kernel on its serial driver); the time."""
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        t0 = time.perf_counter()
        w.step()
        return time.perf_counter() - t0
    finally:
        numba.set_num_threads(threads)


def run(kind, n, seconds, ground, budget=None, cap_seconds=3.0, spacing=1.2, single=False, points=False):
    """Step both simulations in turn (and, with ``single``, a second world of ours on one thread);
    returns a result dict (times in s, per step). With ``points``, each step's contact points of
    both engines are counted too, after the timed calls: ours solved by the step's dynamics,
    pybullet's ``getContactPoints`` after its step."""
    starts = grid(n, spacing)
    t_build = time.perf_counter()
    w = our_world(kind, starts, ground)
    t_build = time.perf_counter() - t_build
    w1 = our_world(kind, starts, ground) if single else None
    bullet = bullet_world(kind, starts, ground) if pb is not None else None
    steps = int(round(seconds / DT))
    per_second = int(round(1.0 / DT))
    ours, ours1, theirs, broad, narrow, dyn = [], [], [], [], [], []
    pts_ours, pts_theirs = [], []
    capped = None
    t_start = time.perf_counter()
    k = 0
    while k < steps:
        if w1 is not None and k % 2:  # our two worlds take turns going first (the caches they find)
            ours1.append(one_thread_step(w1))
        t0 = time.perf_counter()
        w.step()
        ours.append(time.perf_counter() - t0)
        if w1 is not None and not k % 2:
            ours1.append(one_thread_step(w1))
        broad.append(w.stats["broad"])
        narrow.append(w.stats["narrow"])
        dyn.append(w.stats["update"])
        if bullet is not None:
            t0 = time.perf_counter()
            pb.stepSimulation(physicsClientId=bullet[0])
            theirs.append(time.perf_counter() - t0)
        if points:
            pts_ours.append(w.dynamics.stats["contact_points"])
            pts_theirs.append(len(pb.getContactPoints(physicsClientId=bullet[0])) if bullet is not None else 0)
        k += 1
        if budget is not None and k == per_second and capped is None:
            spent = time.perf_counter() - t_start
            projected = spent / k * steps  # the settled steps cost about what the landing ones do
            if projected > budget and seconds > cap_seconds:
                capped = (seconds, cap_seconds, projected)
                seconds = cap_seconds
                steps = int(round(seconds / DT))
    rest = [t - b - n_ - d for t, b, n_, d in zip(ours, broad, narrow, dyn)]
    fall = slice(0, per_second)
    settled = slice(steps - per_second, steps)
    out = {"kind": kind, "n": n, "seconds": seconds, "capped": capped, "build": t_build, "world": w,
           "bullet": bullet, "wall": time.perf_counter() - t_start,
           "ours": (ours[fall], ours[settled]), "theirs": (theirs[fall], theirs[settled]) if theirs else None,
           "ours1": (ours1[fall], ours1[settled]) if ours1 else None,
           "same": same_state(w, w1) if w1 is not None else None,
           "phases": {name: (x[fall], x[settled]) for name, x in
                      (("broad", broad), ("narrow", narrow), ("dynamics", dyn), ("rest", rest))},
           "contacts": (w.stats["candidates"], w.stats["manifolds"], w.stats["points"]),
           "points": (pts_ours[fall], pts_theirs[fall]) if points else None,
           "state_ours": our_state(w),
           "state_bullet": bullet_state(*bullet) if bullet is not None else None}
    return out


def same_state(w, w1):
    """Whether two worlds of ours ended in the same state bit for bit (poses, velocities, spins)."""
    return all(np.array_equal(a.pose, b.pose) and np.array_equal(a.velocity, b.velocity)
               and np.array_equal(a.spin, b.spin) for a, b in zip(w.bodies, w1.bodies))


def report_load(runs):
    """The threads-and-load table: per scene and window, ours threaded, ours on one thread and
    pybullet, each under each load, against the same engine's quiet time on one thread (ours) or
    quiet (pybullet): the ratio of the window medians, and the median over the window's steps of
    each step's ratio to the same step quiet (every run simulates the same steps: the scenes are
    seeded and both engines deterministic)."""
    print("\n[4] threads and load, ms: median step time (a | b): a = its ratio to the same column's quiet median, "
          "the threaded\n    column's to ours on one thread quiet (the goal: every row <= 1.5x); b = the median "
          "of each step's ratio to\n    that step quiet. When the busy processes take a core, the scheduler "
          "stops this one for a few ms every\n    few steps: b is the step's own cost, a also moves with where "
          "the stopped steps fall in a window whose\n    steps range from free fall to a landed pile")
    print("    (cores: what the busy processes and this process used on average while the scenes ran, CPU time over\n"
          "    wall time: the check that the busy processes did take the cores)")
    print(f"  {'scene':16s}{'window':>10s}{'load':>10s}{'cores':>11s}{'ours threaded':>22s}{'ours 1 thread':>22s}"
          f"{'pybullet':>22s}   same state")
    quiet = runs[0][2]
    for cond, use, results in runs:
        for r, q in zip(results, quiet):
            for win, window in ((0, "fall"), (1, "settled")):
                line = f"  {label(r):16s}{window:>10s}{cond:>10s}{use[0]:>5.2f} /{use[1]:>4.2f}"
                for col, ref_col in (("ours", "ours1"), ("ours1", "ours1"), ("theirs", "theirs")):
                    if r[col] is None or q[ref_col] is None:
                        line += f"{'-':>22s}"
                        continue
                    steps, ref = np.asarray(r[col][win]), np.asarray(q[ref_col][win])
                    m = stats(steps)[0]
                    k = min(len(steps), len(ref))
                    paired = float(np.median(steps[:k] / ref[:k]))
                    line += f"{m:>9.3f} ({m / stats(ref)[0]:4.1f}x |{paired:4.1f}x)"
                print(line + ("" if r["same"] is None else f"   {'yes' if r['same'] else 'NO'}"))


def report_times(results):
    print("\n[1] step time, ms: median (25-75%) over the window; ratio = ours / pybullet (< 1: ours faster)")
    head = f"  {'scene':16s}{'window':>16s}{'ours':>24s}{'pybullet':>22s}{'ratio':>8s}"
    print(head)
    for r in results:
        name = label(r)
        s = r["seconds"]
        for win, window in ((0, "fall 0-1 s"), (1, f"settled {s - 1:g}-{s:g} s")):
            o = stats(r["ours"][win])
            line = f"  {name:16s}{window:>16s}{o[0]:>10.2f} ({o[1]:6.2f}-{o[2]:6.2f})"
            if r["theirs"] is not None:
                t = stats(r["theirs"][win])
                line += f"{t[0]:>8.3f} ({t[1]:5.3f}-{t[2]:5.3f}){o[0] / t[0]:>8.1f}x"
            print(line)
        if r["capped"]:
            was, now, proj = r["capped"]
            print(f"  {'':16s}capped: {was:g} s simulated would take ~{proj:.0f} s of wall time (budget); "
                  f"both stopped at {now:g} s, settled window {now - 1:g}-{now:g} s")
    print("\n  ours by phase, ms: median over the window (medians of parts need not add up to the step's)")
    print(f"  {'scene':16s}{'window':>10s}{'broad':>9s}{'narrow':>9s}{'dynamics':>10s}{'rest':>8s}"
          f"{'step':>9s}   candidates / manifolds / points at the end")
    for r in results:
        name = label(r)
        for win, window in ((0, "fall"), (1, "settled")):
            ph = [stats(r["phases"][p][win])[0] for p in ("broad", "narrow", "dynamics", "rest")]
            extra = "   " + " / ".join(map(str, r["contacts"])) if win == 1 else ""
            print(f"  {name:16s}{window:>10s}" + "".join(f"{x:>9.2f}" for x in ph[:2]) + f"{ph[2]:>10.2f}"
                  + f"{ph[3]:>8.2f}{stats(r['ours'][win])[0]:>9.2f}" + extra)


def report_steps(results):
    """The fall step by step: where the window's median comes from. Each step's time of both engines
    and the contact points each solved in it; steps are grouped into runs whose point counts stay
    within 10% on both sides (a layer landing, resting, the next one landing)."""
    print("\n[5] the fall step by step (--steps): ms per step and contact points solved; ratio = ours / pybullet")
    for r in results:
        if r["points"] is None or r["theirs"] is None:
            continue
        ours, theirs = np.asarray(r["ours"][0]) * 1e3, np.asarray(r["theirs"][0]) * 1e3
        po, pt = r["points"]
        print(f"  {label(r)}: median ours {np.median(ours):.3f}, pybullet {np.median(theirs):.3f}; "
              f"steps with contact points: ours {int(np.count_nonzero(po))}, pybullet {int(np.count_nonzero(pt))}")
        print(f"  {'steps':>9s}{'ours':>9s}{'pybullet':>10s}{'ratio':>7s}{'points ours':>13s}{'pybullet':>10s}")
        k = 0
        while k < len(ours):
            e = k + 1  # a run of steps with a similar count of points on both sides (within 10%)
            while (e < len(ours) and abs(po[e] - po[k]) <= 0.1 * max(po[k], 1)
                   and abs(pt[e] - pt[k]) <= 0.1 * max(pt[k], 1)):
                e += 1
            o, t = float(np.median(ours[k:e])), float(np.median(theirs[k:e]))
            print(f"  {f'{k}-{e - 1}':>9s}{o:>9.3f}{t:>10.3f}{o / t:>6.2f}x{int(np.median(po[k:e])):>13d}"
                  f"{int(np.median(pt[k:e])):>10d}")
            k = e


def count(n):
    """'1 body', '3 bodies'."""
    n = int(n)
    return f"{n} {'body' if n == 1 else 'bodies'}"


def report_settle(results):
    print(f"\n[2] settle check at the end of the run: at rest = speed < {SLOW} m/s; height = mean centre of mass "
          f"y, m;\n    lowest = lowest point of any body, m (negative: into the ground); sunk = lowest point "
          f"below -{SUNK} m; through = centre below 0")
    print(f"  {'scene':16s}{'t, s':>6s}{'who':>10s}{'at rest':>9s}{'max |v|':>9s}{'height':>9s}{'lowest':>9s}"
          f"{'sunk':>6s}{'through':>9s}")
    for r in results:
        name = label(r)
        for who, st in (("ours", r["state_ours"]), ("pybullet", r["state_bullet"])):
            if st is None:
                continue
            speed, com, low = st
            print(f"  {name:16s}{r['seconds']:>6g}{who:>10s}{np.mean(speed < SLOW):>9.1%}{speed.max():>9.3f}"
                  f"{com.mean():>9.4f}{low.min():>9.4f}{int(np.sum(low < -SUNK)):>6d}{int(np.sum(com < 0)):>9d}")
        so, sb = r["state_ours"], r["state_bullet"]
        notes = []
        if np.mean(so[0] < SLOW) < 1.0:
            notes.append(f"ours has {count(np.sum(so[0] >= SLOW))} still moving")
        if np.sum(so[2] < -SUNK):
            notes.append(f"ours has {count(np.sum(so[2] < -SUNK))} sunk")
        if sb is not None:
            if np.mean(sb[0] < SLOW) < 1.0:
                notes.append(f"pybullet has {count(np.sum(sb[0] >= SLOW))} still moving")
            if np.sum(sb[2] < -SUNK):
                notes.append(f"pybullet has {count(np.sum(sb[2] < -SUNK))} sunk")
            notes.append(f"mean height ours - pybullet = {so[1].mean() - sb[1].mean():+.4f} m")
        print(f"  {'':16s}-> " + "; ".join(notes))


def profile_step(w, top=15):
    """cProfile of one more step of ``w``: the ``top`` functions by own time, in microseconds (pstats
    prints seconds to three places, which rounds every entry of a sub-millisecond step to zero)."""
    prof = cProfile.Profile()
    prof.enable()
    w.step()
    prof.disable()
    st = pstats.Stats(prof)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    print(f"  {st.total_calls} function calls in {st.total_tt * 1e6:.0f} us")
    print(f"  {'calls':>7s}{'own us':>9s}{'with callees us':>17s}  function")
    for (path, line, name), (_, calls, own, cum, _) in rows[:top]:
        where = f"{path.replace(root, '').replace(sys.prefix + os.sep, '')}:{line}({name})" if line else name
        print(f"  {calls:>7d}{own * 1e6:>9.1f}{cum * 1e6:>17.1f}  {where[:110]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="N = 100 boxes and 100 U shapes only, 3 simulated seconds")
    ap.add_argument("--no-sleep", action="store_true", help="no sleeping on either side (time the settled solve)")
    ap.add_argument("--ground", choices=("plane", "box", "mesh"), default="plane",
                    help="ours: half-space (default), a static box hull or a static triangle-mesh floor; "
                         "pybullet: GEOM_PLANE, GEOM_BOX or a concave GEOM_MESH")
    ap.add_argument("--budget", type=float, default=150.0,
                    help="wall seconds allowed for ours at N = 1000 before capping at 3 simulated s")
    ap.add_argument("--scene", choices=("box100", "box1000", "u", "mesh"), default=None,
                    help="run only this scene (its full row; default: all of them)")
    ap.add_argument("--threads", type=int, default=None,
                    help="numba threads for ours (default: all cores; pybullet's step is single-threaded)")
    ap.add_argument("--steps", action="store_true",
                    help="also print the fall step by step, with both engines' contact points (table [5])")
    ap.add_argument("--busy", type=int, default=0, metavar="N",
                    help="run every scene again with N busy processes (Python spin loops) beside both engines, "
                         "and compare (table [4])")
    args = ap.parse_args()
    if args.busy < 0:
        ap.error(f"--busy: expected a count >= 0, got {args.busy}")
    if args.threads is not None:
        import numba

        numba.set_num_threads(args.threads)
    global SLEEP
    SLEEP = not args.no_sleep
    if not SLEEP:
        import app.world.dynamics

        app.world.dynamics.SLEEP_TIME = float("inf")  # read at every step by Dynamics._sleep
    if pb is None:
        print("note: pybullet is not installed (.venv/bin/pip install pybullet): its columns are skipped")
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (shared: "
          f"expect a few % to tens of % noise; compare the 25-75% ranges)")
    import numba

    print(f"dt = 1/60 s, {ITERATIONS} solver iterations, ground = {args.ground}, pybullet "
          f"{pb.getAPIVersion() if pb else 'missing'}; ours on {numba.get_num_threads()} thread(s) "
          "(hull-pair batch and solver islands; --threads 1 for one)")
    t0 = time.perf_counter()
    for kind in ("box", "u", "mesh"):
        if args.scene is None or args.scene.startswith(kind):
            warm_up(kind, args.ground)
    print(f"warm-up (numba kernels loaded or compiled, V-HACD pieces read from the cache or made): "
          f"{time.perf_counter() - t0:.1f} s")

    plan = [("box", 100, 3.0 if args.quick else 5.0, None, 1.2)]
    if args.quick:
        plan += [("u", 100, 3.0, None, 1.5)]
    else:
        plan += [("box", 1000, 5.0, args.budget, 1.2), ("u", 100, 5.0, None, 1.5),
                 ("mesh", 100, 5.0, None, 1.5)]
    if args.scene is not None:  # one scene only: its row of the full plan
        plan = [p for p in [("box", 100, 5.0, None, 1.2), ("box", 1000, 5.0, args.budget, 1.2),
                            ("u", 100, 5.0, None, 1.5), ("mesh", 100, 5.0, None, 1.5)]
                if args.scene == f"{p[0]}{p[1] if p[0] == 'box' else ''}"]
    single = numba.get_num_threads() > 1  # ours also on one thread, beside the threaded world
    conditions = [("quiet", 0)] + ([(f"busy {args.busy}", args.busy)] if args.busy else [])
    runs = []
    for cond, busy in conditions:
        procs = start_busy(busy)
        try:
            if busy:
                time.sleep(1.0)  # let the spinners start
            load = os.getloadavg()[0]
            print(f"{cond}: {busy} busy process(es) beside the engines, load average {load:.2f}")
            use = cpu_use(procs)
            results = []
            for kind, n, seconds, budget, spacing in plan:
                r = run(kind, n, seconds, args.ground, budget=budget, spacing=spacing, single=single,
                        points=args.steps and not busy)
                print(f"  ran {n} {kind}: {r['seconds']:g} s simulated in {r['wall']:.1f} s wall (all), "
                      f"ours built in {r['build']:.1f} s")
                results.append(r)
            use = cpu_use(procs, use)
        finally:
            stop_busy(procs)
        print(f"  cores used while the scenes ran (CPU time / wall time): the busy processes {use[0]:.2f}, "
              f"this process {use[1]:.2f}, of {os.cpu_count()}")
        runs.append((cond, use, results))
    for cond, use, results in runs:
        if len(runs) > 1:
            print(f"\n==== {cond} (cores used: busy processes {use[0]:.2f}, this process {use[1]:.2f}) ====")
        report_times(results)
        report_settle(results)
    results = runs[0][2]

    big = next((r for r in results if r["kind"] == "box" and r["n"] == 1000), results[0])
    print(f"\n[3] cProfile of one settled step of ours, {big['n']} {big['kind']} bodies at t = {big['seconds']:g} s "
          "(top 15 by tottime; profiling slows Python-heavy code more than compiled)")
    profile_step(big["world"])
    if single:
        report_load(runs)
    if args.steps:
        report_steps(results)
    for _, _, results in runs:
        for r in results:
            if r["bullet"] is not None:
                pb.disconnect(physicsClientId=r["bullet"][0])


if __name__ == "__main__":
    main()
