"""The settings and edits the GUI panel makes to the viewer's session: the world's gravity, step,
solver and sleeping, the broad phase and time scale, a body's motion, deleting, duplicating and
framing a body. Each clamps its value to the bounds below. Mixed into
:class:`~app.viewer.session.Session`; GL-free.
"""

import math

import numpy as np

__all__ = ["PanelSettings", "GRAVITY_LIMIT", "STEP_RANGE", "ITERATION_RANGE", "TIME_SCALE_RANGE"]

# Bounds on what the panel's world settings take.
GRAVITY_LIMIT = 100.0               # units/s^2, per component
STEP_RANGE = (1.0 / 1000.0, 1.0 / 20.0)  # seconds
ITERATION_RANGE = (1, 200)
TIME_SCALE_RANGE = (0.05, 4.0)


class PanelSettings:
    """The session's settings (see the module docs)."""

    def select(self, index):
        """Select body ``index`` (None: nothing); an index out of range selects nothing."""
        n = len(self.world.bodies)
        self.selected = index if index is not None and 0 <= index < n else None

    def set_depth(self, depth):
        """Show the OBB trees down to ``depth`` (through the ``[`` / ``]`` action, so it is clamped the same way)."""
        self.do_depth(int(depth) - self.depth, False)

    def set_gravity(self, gravity):
        """Set the world's gravity (3,) (units/s^2, each component within +-GRAVITY_LIMIT); wakes every body,
        since a sleeping one would not feel the change. Returns the gravity now in force."""
        g = np.asarray(gravity, float).reshape(3)
        if not np.all(np.isfinite(g)):
            self.say(f"gravity {g.tolist()}: not finite; unchanged", error=True)
            return self.world.dynamics.gravity
        self.world.dynamics.gravity = np.clip(g, -GRAVITY_LIMIT, GRAVITY_LIMIT)
        for b in self.world.bodies:
            b.wake()
        return self.world.dynamics.gravity

    def set_fixed_step(self, dt):
        """Set the fixed time step (seconds, clamped to STEP_RANGE); the frames then run as many steps
        as their time allows (at most ``world.max_steps``)."""
        self.world.dt = float(np.clip(dt, *STEP_RANGE))
        return self.world.dt

    def set_iterations(self, n):
        """Solver (velocity) iterations per step, clamped to ITERATION_RANGE."""
        self.world.dynamics.iterations = int(np.clip(int(n), *ITERATION_RANGE))
        return self.world.dynamics.iterations

    def set_friction(self, mu):
        """The default friction (>= 0): read at every step by every contact of a body without its own
        ``friction`` (scene files may give one), so existing contacts change from the next step."""
        self.world.dynamics.friction = max(0.0, float(mu)) if math.isfinite(mu) else self.world.dynamics.friction
        return self.world.dynamics.friction

    def set_restitution(self, e):
        """The default restitution (0..1), read as :meth:`set_friction`'s friction is."""
        self.world.dynamics.restitution = float(np.clip(e, 0.0, 1.0)) if math.isfinite(e) else \
            self.world.dynamics.restitution
        return self.world.dynamics.restitution

    def set_sleeping(self, on):
        """Let resting islands sleep (True, the default) or keep every body awake (False: the sleeping
        ones wake at the next step)."""
        self.world.dynamics.allow_sleep = bool(on)
        if not on:
            for b in self.world.bodies:
                b.wake()

    def set_ccd(self, on):
        """Continuous detection on / off (through the ``Y`` action, with its message)."""
        if bool(on) != self.world.ccd:
            self.do_ccd(None, False)

    def set_broad_phase(self, name):
        """Switch to the broad phase ``name`` (one of :data:`collision.broad_phase.BROAD_PHASES`)."""
        if name != self.world.broad_phase_name:
            self.world.set_broad_phase(name)
            self.say(f"broad phase: {name}")

    def set_time_scale(self, scale):
        """Simulated seconds per real second (clamped to TIME_SCALE_RANGE): the frame's time is scaled
        before the fixed-step accumulator, so the step and its results stay the same, only more or
        fewer of them run per frame."""
        self.time_scale = float(np.clip(scale, *TIME_SCALE_RANGE)) if math.isfinite(scale) else self.time_scale
        return self.time_scale

    def set_motion(self, index, motion):
        """Make body ``index`` dynamic, kinematic or static; it starts from rest. A body without mass
        (an open mesh) cannot be dynamic: a message says so and nothing changes. Returns whether it changed."""
        b = self.world.bodies[index]
        if motion not in ("dynamic", "kinematic", "static"):
            raise ValueError(f"motion {motion!r}: expected dynamic, kinematic or static")
        if motion == b.motion:
            return False
        if motion == "dynamic" and b.mass is None:
            self.say(f"{b.name} has no mass (an open mesh, or a ground): it cannot be dynamic", error=True)
            return False
        if self.world.dynamics.grab is not None and self.world.dynamics.grab.body is b:
            self.world.dynamics.release()
            self._drag = None
        b.motion = motion
        b.velocity, b.spin = np.zeros(3), np.zeros(3)
        b.wake()
        self.world.wake_touching(index)
        self.say(f"{b.name} is now {motion}")
        return True

    def delete_body(self, index):
        """Remove body ``index`` from the world (R does not bring it back; reload the scene for that)."""
        bodies = self.world.bodies
        b = bodies[index]
        chosen = bodies[self.selected] if self.selected is not None else None
        if self.world.dynamics.grab is not None and self.world.dynamics.grab.body is b:
            self.world.dynamics.release()
        self._drag = None
        self.world.wake_touching(index)  # what it held up falls
        bodies.pop(index)
        if b in self._thrown:
            self._thrown.remove(b)
        self.world.contacts = []  # their indices are of the old list; the next frame finds them again
        self.selected = bodies.index(chosen) if chosen is not None and chosen in bodies else None
        self.say(f"deleted {b.name}")

    def duplicate_body(self, index):
        """Add a copy of body ``index`` (sharing its mesh, trees, pieces and mass) above it, in free
        space (:func:`app.scene.placement.place_body`), and select it. Returns the new body."""
        from ..world.body import Body
        from ..scene.placement import place_body

        b = self.world.bodies[index]
        names = {o.name for o in self.world.bodies}
        k = 2
        while f"{b.name} ({k})" in names:
            k += 1
        copy = Body(f"{b.name} ({k})", b.vertices, b.faces, b.tree, b.pose.copy(), b.color, motion=b.motion,
                    pieces=b.pieces, mass=b.mass, shapes=b.shapes, friction=b.friction, restitution=b.restitution)
        lo, hi = b.world_aabb()
        place_body(copy, self.world.bodies, np.array([(lo[0] + hi[0]) / 2, hi[1], (lo[2] + hi[2]) / 2]))
        copy.home = copy.pose.copy()
        self.world.bodies.append(copy)
        self.selected = len(self.world.bodies) - 1
        self.say(f"added {copy.name}, a copy of {b.name}")
        return copy

    def frame_body(self, index):
        """Point the camera at body ``index`` and fit it in view."""
        lo, hi = self.world.bodies[index].mesh_aabb()
        self.camera.frame(lo, hi)
