"""What the keys and the mouse do to the viewer's session: the key table's actions (``do_*``,
named in :data:`app.viewer.controls.BINDINGS`), picking, dragging, orbiting, and picking the
pair to inspect. Mixed into :class:`~app.viewer.session.Session`; GL-free.
"""

import os
import time

import numpy as np

from ..world.dynamics import Dynamics
from ..world.world import rotation
from .controls import MOVE_STEP, TURN_STEP

__all__ = ["KeyActions", "MAX_THROWN"]

MAX_THROWN = 50  # thrown balls kept in the scene (the oldest go first)


class KeyActions:
    """The session's input actions (see the module docs): they change its world, camera,
    selection and flags, and say what they did through ``say``."""

    # -- keys ----------------------------------------------------------------

    def key(self, name, shift=False):
        """Handle a key by its pyglet name (``"TAB"``, ``"LEFT"``, ...). Returns True if bound."""
        if name not in self._bindings:
            return False
        action, arg = self._bindings[name]
        getattr(self, "do_" + action)(arg, shift)
        return True

    def _movable(self):
        """The selected body's index when the keys may move it; else None, with a message (a static
        body stays where it is: the bodies resting on it would float or sink)."""
        if self.selected is None:
            self.say("select a body first (click it, or Tab)")
            return None
        body = self.world.bodies[self.selected]
        if body.motion == "static":
            self.say(f"{body.name} is static: it can be selected, not moved")
            return None
        return self.selected

    def do_move(self, direction, shift):
        k = self._movable()
        if k is not None:
            step = MOVE_STEP * (10 if shift else 1)
            self.world.move_body(k, translation=np.asarray(direction, float) * step)
            self.world.wake_touching(k)

    def do_turn(self, axis, shift):
        k = self._movable()
        if k is not None:
            angle = TURN_STEP * (5 if shift else 1)
            self.world.move_body(k, rot=rotation(axis, angle))
            self.world.wake_touching(k)

    def do_cycle(self, _arg, _shift):
        n = len(self.world.bodies)
        if n:
            self.selected = 0 if self.selected is None else (self.selected + 1) % n

    def do_pause(self, _arg, _shift):
        self.world.paused = not self.world.paused

    def do_single_step(self, _arg, _shift):
        self.world.paused = True
        self.world.step()

    def do_reset(self, _arg, _shift):
        self.world.reset()

    def do_frame(self, _arg, _shift):
        self.frame_camera()

    def do_screenshot(self, _arg, _shift):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.screenshot_requested = os.path.join(self.screenshot_dir, f"screenshot-{stamp}.png")

    def do_toggle(self, name, _shift):
        self.flags[name] = not self.flags[name]
        self._chosen.add(name)

    def do_depth(self, delta, _shift):
        deepest = max((b.tree.depth for b in self.world.bodies), default=1) - 1
        self.depth = int(np.clip(self.depth + delta, 0, deepest))

    def do_throw(self, _arg, shift):
        """A ball from the camera at the point it looks at, half the size of a typical body
        (thrown balls aside; with no body that moves, a hundredth of the camera's distance),
        reaching it in about half a second (Shift: 3x faster) but never faster than a quarter of
        what the step integrates (a scene kilometres across), aimed high by what gravity takes on
        the way; the oldest thrown balls go once there are more than MAX_THROWN."""
        from ..scene.loader import projectile_body
        from ..scene.scene_file import unique_name
        from ..world.world import MAX_SPEED

        eye = self.camera.eye
        ahead = self.camera.target - eye
        distance = float(np.linalg.norm(ahead))
        ahead /= distance
        sizes = [b.radius for b in self.world.bodies if b.motion != "static" and b not in self._thrown]
        radius = 0.5 * float(np.median(sizes)) if sizes else max(0.1, 0.01 * distance)
        speed = min((3.0 if shift else 1.0) * max(3.0, 2.0 * distance), 0.25 * MAX_SPEED)
        start = eye + ahead * 2 * radius
        flight = distance / speed  # the ballistic throw that reaches the target after this long
        velocity = (self.camera.target - start) / flight - 0.5 * self.world.dynamics.gravity * flight
        bodies = self.world.bodies
        ball = projectile_body(unique_name(f"ball {len(self._thrown) + 1}", {b.name for b in bodies}), radius, start,
                               velocity)
        chosen = bodies[self.selected] if self.selected is not None else None
        bodies.append(ball)
        self._thrown.append(ball)
        while len(self._thrown) > MAX_THROWN:
            oldest = self._thrown.pop(0)
            if oldest in bodies:
                bodies.remove(oldest)
        self.selected = bodies.index(chosen) if chosen is not None and chosen in bodies else None
        self.say(f"threw {ball.name} at {speed:.1f} units/s")

    def do_ccd(self, _arg, _shift):
        self.world.ccd = not self.world.ccd
        self.say("continuous detection " + ("on: fast bodies stop at what they hit" if self.world.ccd else
                                            "off: a body faster than its size per step can tunnel"))

    def do_broad_phase(self, _arg, _shift):
        self.say(f"broad phase: {self.world.next_broad_phase()}")

    def do_quit(self, _arg, _shift):
        self.quit_requested = True

    # -- mouse ---------------------------------------------------------------

    def pick(self, x, y):
        """Index of the body under window pixel ``(x, y)``, and the hit point."""
        origin, direction = self.camera.ray(x, y)
        k, _, point = self.world.pick(origin, direction)
        return k, point

    def mouse_press(self, x, y, button):
        """``button``: "left", "right" or "middle". A left press selects the body under the cursor
        and, unless it is static, holds it for a drag."""
        self._press = (x, y)
        self._drag = None
        if button == "left":
            k, point = self.pick(x, y)
            self.selected = k
            if k is not None and self.world.bodies[k].motion != "static":
                self._drag = {"point": point, "body": self.world.bodies[k]}

    def mouse_drag(self, x, y, dx, dy, button):
        if button == "left" and self._drag is not None:
            self._drag_body(x, y)
        elif button == "left":
            self.camera.orbit(dx, dy)  # on nothing, or on a static body (the ground): orbit
        else:
            self.camera.pan(dx, dy)

    def mouse_release(self, x, y, button):
        self._drag = None
        self.world.dynamics.release()

    def scroll(self, clicks):
        self.camera.zoom(clicks)

    @property
    def grab_line(self):
        """``(grabbed point, cursor point)`` world (3,) each while a dynamic body is dragged, else None."""
        joint = self.world.dynamics.grab
        if joint is None or joint.body not in self.world.bodies:
            return None
        return joint.anchor(), joint.target.copy()

    def _drag_body(self, x, y):
        """Pull the dragged body towards the cursor in the view plane through the grabbed point.

        A dynamic body hangs on the mouse joint (:class:`app.world.mouse_joint.MouseJoint`): soft, with a
        force of at most a few dozen times its weight and a speed of at most a few metres a second
        however fast the cursor moves, solved with the contacts, so a drag cannot fling it or
        blow up what it touches. A kinematic body follows the cursor exactly and wakes the
        sleeping bodies it reaches (they are pushed out by the contacts)."""
        d = self._drag
        body = d["body"]
        if body not in self.world.bodies:  # removed meanwhile (a scene swap, an old thrown ball)
            self._drag = None
            self.world.dynamics.release()
            return
        origin, direction = self.camera.ray(x, y)
        normal = self.camera.target - self.camera.eye
        normal /= np.linalg.norm(normal)
        denom = direction @ normal
        if abs(denom) < 1e-9:
            return
        t = ((d["point"] - origin) @ normal) / denom
        target = origin + t * direction
        if not np.all(np.isfinite(target)):
            return
        index = self.world.bodies.index(body)
        if Dynamics.moves(body):
            if self.world.dynamics.grab is None or self.world.dynamics.grab.body is not body:
                self.world.dynamics.grab_body(body, d["point"], target)
            self.world.dynamics.move_grab(target)
            return
        delta = target - d["point"]
        self.world.move_body(index, translation=delta)
        self.world.wake_touching(index)
        d["point"] = target

    # -- the picked pair (app/viewer/inspect.py) -------------------------------------------

    def pick_partner(self, x, y):
        """Ctrl+click: the body under window pixel ``(x, y)`` becomes the selected body's partner."""
        k, _ = self.pick(x, y)
        if k is None:
            return
        if self.selected is None or k == self.selected:
            self.selected = k
            self.say(f"selected {self.world.bodies[k].name}; Ctrl+click another body to pair it")
            return
        self.inspector.set_partner(k)
        self.say(f"pair: {self.world.bodies[self.selected].name} and {self.world.bodies[k].name}")

    def do_partner(self, _arg, _shift):
        self.inspector.cycle_partner()

    def do_trav_step(self, delta, shift):
        """Step the traversal by ``delta`` node pairs (Shift: to the first or the last)."""
        if shift:
            self.inspector.step_to(0 if delta < 0 else 1 << 62)
        else:
            self.inspector.step_by(delta)

    def do_gjk_step(self, delta, shift):
        """Step GJK by ``delta`` iterations (Shift: to the first or the last)."""
        if shift:
            self.inspector.gjk_step_to(0 if delta < 0 else 1 << 62)
        else:
            self.inspector.gjk_step_by(delta)

    # -- the GUI panel -------------------------------------------------------

    def do_panel(self, _arg, _shift):
        self.panel_visible = not self.panel_visible
