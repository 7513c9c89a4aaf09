"""Generate the project's demo meshes into ``assets/meshes/`` (run once; output is committed).

    .venv/bin/python assets/generate.py

Every mesh is closed and consistently oriented (so containment and mass
properties are defined), centred on its own origin, about one unit across:

- ``torus_knot.ply``: a (2, 3) torus knot tube, concave and self-wrapping;
- ``gear.ply``: a 16-tooth spur gear with a bore, concave;
- ``capsule.ply``: a capsule, convex;
- ``box.ply``: a box 1.2 x 0.6 x 0.4, convex;
- ``blob.ply``: a lumpy sphere with a dent, mildly concave;
- ``bowl.ply``: an open-top hemispherical bowl with a wall thickness, concave.
"""

import os

import numpy as np
import trimesh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "meshes")


def tube(path_pts, radius, sides):
    """A closed tube around a closed polyline ``path_pts (n, 3)`` (a ring of rings)."""
    n = len(path_pts)
    tangent = np.roll(path_pts, -1, axis=0) - np.roll(path_pts, 1, axis=0)
    tangent /= np.linalg.norm(tangent, axis=1)[:, None]
    # Parallel-transport a normal along the loop, then spread the twist evenly.
    normal = np.zeros_like(path_pts)
    ref = np.cross(tangent[0], [0.0, 0.0, 1.0])
    if np.linalg.norm(ref) < 1e-6:
        ref = np.cross(tangent[0], [0.0, 1.0, 0.0])
    normal[0] = ref / np.linalg.norm(ref)
    for i in range(1, n):
        nv = normal[i - 1] - tangent[i] * np.dot(normal[i - 1], tangent[i])
        normal[i] = nv / np.linalg.norm(nv)
    end = normal[-1] - tangent[0] * np.dot(normal[-1], tangent[0])
    end /= np.linalg.norm(end)
    twist = np.arctan2(np.dot(np.cross(end, normal[0]), tangent[0]), np.dot(end, normal[0]))
    binormal = np.cross(tangent, normal)
    ang = np.linspace(0, 2 * np.pi, sides, endpoint=False)
    verts = []
    for i in range(n):
        a = ang + twist * i / n
        verts.append(path_pts[i] + radius * (np.cos(a)[:, None] * normal[i] + np.sin(a)[:, None] * binormal[i]))
    verts = np.concatenate(verts)
    faces = []
    for i in range(n):
        j = (i + 1) % n
        for k in range(sides):
            k1 = (k + 1) % sides
            a, b, c, d = i * sides + k, i * sides + k1, j * sides + k1, j * sides + k
            faces += [[a, b, c], [a, c, d]]
    m = trimesh.Trimesh(verts, np.array(faces), process=True)
    if m.volume < 0:
        m.invert()
    return m


def torus_knot(p=2, q=3, segments=240, sides=16):
    t = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    r = 0.32 * (2.0 + np.cos(q * t))
    path = np.stack([r * np.cos(p * t), r * np.sin(p * t), -0.32 * np.sin(q * t)], axis=1)
    return tube(path, 0.13, sides)


def gear(teeth=16, r_root=0.42, r_tip=0.52, r_bore=0.15, width=0.22, steps_per_tooth=8):
    """A spur gear: star-shaped outline, round bore, extruded along z."""
    n = teeth * steps_per_tooth
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    phase = (ang * teeth / (2 * np.pi)) % 1.0
    # Trapezoidal tooth profile: root, flank up, tip, flank down.
    prof = np.interp(phase, [0, 0.15, 0.35, 0.65, 0.85, 1.0], [0, 0, 1, 1, 0, 0])
    r_out = r_root + (r_tip - r_root) * prof
    outer = np.stack([r_out * np.cos(ang), r_out * np.sin(ang)], axis=1)
    inner = np.stack([r_bore * np.cos(ang), r_bore * np.sin(ang)], axis=1)
    z0, z1 = -width / 2, width / 2
    verts = np.concatenate([
        np.c_[outer, np.full(n, z0)], np.c_[outer, np.full(n, z1)],
        np.c_[inner, np.full(n, z0)], np.c_[inner, np.full(n, z1)],
    ])
    o0, o1, i0, i1 = 0, n, 2 * n, 3 * n
    faces = []
    for k in range(n):
        k1 = (k + 1) % n
        faces += [[o0 + k, o0 + k1, o1 + k1], [o0 + k, o1 + k1, o1 + k]]          # outer wall
        faces += [[i0 + k, i1 + k1, i0 + k1], [i0 + k, i1 + k, i1 + k1]]          # bore wall
        faces += [[o1 + k, o1 + k1, i1 + k1], [o1 + k, i1 + k1, i1 + k]]          # top ring
        faces += [[o0 + k, i0 + k1, o0 + k1], [o0 + k, i0 + k, i0 + k1]]          # bottom ring
    m = trimesh.Trimesh(verts, np.array(faces), process=True)
    if m.volume < 0:
        m.invert()
    return m


def blob(seed=3):
    m = trimesh.creation.icosphere(subdivisions=4, radius=0.5)
    rng = np.random.default_rng(seed)
    u = m.vertices / np.linalg.norm(m.vertices, axis=1)[:, None]
    bumps = np.zeros(len(u))
    for d in rng.normal(size=(7, 3)):
        d /= np.linalg.norm(d)
        bumps += 0.18 * np.exp(-10 * (1 - u @ d))
    bumps -= 0.25 * np.exp(-7 * (1 - u @ np.array([0, 0, 1.0])))
    m.vertices = u * (0.5 * (1 + bumps))[:, None]
    return m


def bowl(radius=0.9, thickness=0.08, rings=16, segments=48):
    """A hemispherical shell, open at the top: outer and inner surfaces joined by a rim."""
    th = np.linspace(0, np.pi / 2, rings + 1)[1:]  # from near the pole to the equator
    ph = np.linspace(0, 2 * np.pi, segments, endpoint=False)

    def sheet(r):
        pts = [[0.0, -r, 0.0]]
        for t in th:
            pts += [[r * np.sin(t) * np.cos(p), -r * np.cos(t), r * np.sin(t) * np.sin(p)] for p in ph]
        return np.array(pts)

    outer, inner = sheet(radius), sheet(radius - thickness)
    n = len(outer)
    verts = np.concatenate([outer, inner])
    faces = []
    for base, flip in ((0, False), (n, True)):
        for k in range(segments):  # pole fan
            f = [base, base + 1 + (k + 1) % segments, base + 1 + k]
            faces.append(f[::-1] if flip else f)
        for ring in range(rings - 1):
            a0 = base + 1 + ring * segments
            b0 = a0 + segments
            for k in range(segments):
                k1 = (k + 1) % segments
                quad = [[a0 + k, a0 + k1, b0 + k1], [a0 + k, b0 + k1, b0 + k]]
                faces += [q[::-1] for q in quad] if flip else quad
    top_o = 1 + (rings - 1) * segments
    top_i = n + top_o
    for k in range(segments):  # rim
        k1 = (k + 1) % segments
        faces += [[top_o + k, top_o + k1, top_i + k1], [top_o + k, top_i + k1, top_i + k]]
    m = trimesh.Trimesh(verts, np.array(faces), process=True)
    if m.volume < 0:
        m.invert()
    return m


def main():
    os.makedirs(OUT, exist_ok=True)
    meshes = {
        "torus_knot": torus_knot(),
        "gear": gear(),
        "capsule": trimesh.creation.capsule(height=0.6, radius=0.25, count=[24, 12]),
        "box": trimesh.creation.box(extents=[1.2, 0.6, 0.4]),
        "blob": blob(),
        "bowl": bowl(),
    }
    for name, m in meshes.items():
        m.apply_translation(-m.bounds.mean(axis=0))
        assert m.is_watertight and m.is_winding_consistent and m.volume > 0, name
        path = os.path.join(OUT, name + ".ply")
        m.export(path)
        print(f"{path}: {len(m.faces)} triangles, volume {m.volume:.4f}")


if __name__ == "__main__":
    main()
