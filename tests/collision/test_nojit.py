"""``NUMBA_DISABLE_JIT=1`` gives the same answers as the compiled kernels.

A child process computes one batch of every query with the JIT disabled and
writes the results to an ``.npz``; this process recomputes them compiled and
compares. The kernels are plain Python underneath, so the answers must agree
to the last bit except where numba's LLVM code contracts or reorders
floating-point operations (it does not with fastmath off); we allow 1e-12.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import obbcollide as c

    def compute():
        rng = np.random.default_rng(42)
        p = rng.normal(size=(200, 3))
        a, b, cc, d = (rng.normal(size=(200, 3)) for _ in range(4))
        t1 = rng.normal(size=(300, 3, 3))
        t2 = rng.normal(size=(300, 3, 3)) * 0.7 + 0.3
        hull_a = c.ConvexPolyhedron.from_points(rng.normal(size=(12, 3)))
        hull_b = c.ConvexPolyhedron.from_points(rng.normal(size=(12, 3)) + 0.8)
        obb = c.OBB.from_points(rng.normal(size=(30, 3)))
        out = {
            "tri": c.closest_pt_point_triangle(p, a, b, cc),
            "tet": c.closest_pt_point_tetrahedron(p, a, b, cc, d),
            "obb": c.closest_pt_point_obb(p, obb),
            "rect": c.closest_pt_point_rect(p, [0, 0, 0], [[1, 0, 0], [0, 1, 0]], [1, 2]),
            "convex": c.closest_pt_point_convex(p, rng.normal(size=(15, 3))),
            "ss": np.concatenate([np.atleast_2d(x).reshape(200, -1) for x in c.closest_pt_segment_segment(p, a, b, cc)], 1),
            "ll": np.concatenate([np.atleast_2d(x).reshape(200, -1) for x in c.closest_pt_line_line(p, a, b, cc)], 1),
            "st": np.concatenate(c.closest_pt_segment_triangle(p, a, b, cc, d), 1),
            "tt": np.concatenate(c.closest_pt_triangle_triangle(p, a, b, cc, d, p * 0.5), 1),
            "seg2d": c.intersect_segment_segment_2d(p[:, :2], a[:, :2], b[:, :2], cc[:, :2])[2],
            "tritri": c.test_triangle_triangle(t1, t2).astype(float),
            "obbobb": np.array([float(c.test_obb_obb(obb, c.OBB.from_points(rng.normal(size=(9, 3)) + s)))
                                for s in np.linspace(0, 4, 20)]),
            "sat": np.r_[c.convex_convex_sat(hull_a, None, hull_b, None).axis,
                         c.convex_convex_sat(hull_a, None, hull_b, None).depth],
            "vs": np.array([float(c.vector_symbol_collide(hull_a, hull_b).C)]),
        }
        pose_b = np.eye(4)
        pose_b[:3, 3] = [0.3, -0.2, 0.1]
        tree_a = c.OBBTree(hull_a.vertices, hull_a.triangles)
        tree_b = c.OBBTree(hull_b.vertices, hull_b.triangles)
        far = np.eye(4)
        far[:3, 3] = [2.5, 0.4, -0.3]
        dist = c.distance(tree_a, np.eye(4), tree_b, far)
        out["mesh_distance"] = np.r_[dist.distance, dist.point_a, dist.point_b, dist.box_tests, dist.tri_tests]
        out["node_points"] = np.r_[tree_a.support_points[0].ravel(), tree_a.support_points[1].ravel()]
        g = c.gjk_distance(hull_a.vertices, np.eye(4), hull_b.vertices + 2.0, pose_b)
        e = c.convex_penetration(hull_a.vertices, np.eye(4), hull_b.vertices, pose_b, 0.1, 0.05)
        m = c.collide_hull_hull(hull_a, np.eye(4), hull_b, pose_b, margin=0.01)
        out["gjk"] = np.r_[g.distance, g.point_a, g.point_b]
        out["epa"] = np.r_[e.depth, e.normal, e.point_a, e.point_b]
        out["manifold"] = np.r_[m.normal, m.points_a.ravel(), m.depths, m.ids.astype(float)]
        box = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * 0.2
        out["pairs"] = c.make_broad_phase("tree").update(p[:60] - 0.3, p[:60] + 0.3).astype(float)
        out["near_box"] = c.triangles_near_box(c.OBBTree(box, c.ConvexPolyhedron.from_points(box).triangles),
                                               np.eye(4), [0.2, 0, 0], np.eye(3), [0.05, 0.5, 0.5]).astype(float)
        segs = [c.intersect_triangle_triangle(x, y) for x, y in zip(t1[:50], t2[:50])]
        out["tri_seg"] = np.array([s.ravel() if s is not None else np.full(6, np.nan) for s in segs])
        return out

    if __name__ == "__main__":
        np.savez(sys.argv[1], **compute())
''')


def test_disable_jit_gives_same_answers(tmp_path):
    script = tmp_path / "compute.py"
    script.write_text(SCRIPT)
    out = tmp_path / "nojit.npz"
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    subprocess.run([sys.executable, str(script), str(out)], check=True, env=env, cwd=root, timeout=600)
    slow = np.load(out)
    namespace = {}
    exec(compile(SCRIPT, "compute", "exec"), namespace)
    fast = namespace["compute"]()
    assert set(slow.files) == set(fast)
    for key in fast:
        np.testing.assert_allclose(slow[key], fast[key], rtol=0, atol=1e-12, err_msg=key, equal_nan=True)
