"""Loading into the viewer's session in the background: scene files and added meshes (queued,
one worker thread at a time, swapped in by :meth:`SceneLoads.poll` each frame), and saving the
scene. Mixed into :class:`~app.viewer.session.Session`; GL-free.
"""

import os
import threading
import time

__all__ = ["SceneLoads"]


class SceneLoads:
    """The session's loads and saves (see the module docs): they use its ``_loading`` job and
    ``_queue``, its world, camera and messages."""

    # -- files ---------------------------------------------------------------

    def add_mesh(self, path, motion=None, scale=None, wait=False, echo=False):
        """Add a mesh file as a body; it loads in the background, as a scene does.

        The worker reads the file, cuts it into convex pieces (cached) and
        builds its trees and mass (:func:`app.scene.loader.load_mesh_body`) while the
        window keeps drawing, the HUD showing the progress; files added while
        one loads wait their turn. :meth:`poll` then places the body in free
        space above the scene near where the camera looks
        (:func:`app.scene.placement.place_body`), selects it and reframes the camera.
        A bad file gives a message naming it, and nothing else changes.

        Parameters
        ----------
        path : str
        motion : str, optional
            ``"dynamic"``, ``"kinematic"`` or ``"static"``; default
            :attr:`mesh_motion` (``--motion``).
        scale : float, optional
            Multiplies the file's coordinates; default :attr:`mesh_scale`
            (``--mesh-scale``); None: 1, or a unit's factor when the file is
            far larger than the scene's bodies (:func:`app.scene.placement.unit_scale`).
        wait : bool
            Block until the body is in (scripts, tests).
        echo : bool
            Also print the progress on stderr.

        Returns
        -------
        bool
            With ``wait``, whether the body was added; otherwise True (queued).
        """
        motion = motion or self.mesh_motion
        scale = scale if scale is not None else self.mesh_scale
        job = {"kind": "mesh", "path": path, "echo": echo}

        def prepare():  # when its turn comes: the scene it will join
            from ..scene.placement import typical_size

            job["index"], job["typical"] = len(self.world.bodies), typical_size(self.world.bodies)

        def work(progress):
            from ..scene.loader import load_mesh_body

            return load_mesh_body(path, index=job["index"], motion=motion, scale=scale, typical=job["typical"],
                                  progress=progress)

        job.update(prepare=prepare, work=work)
        self._queue.append(job)
        self._start_next()
        if not wait:
            return True
        self._wait_for(job)
        return job["added"]

    def _place_mesh(self, job):
        """Put a loaded mesh body in the world: in free space, selected, in view."""
        from ..scene.placement import ground_for, place_body, size_note
        from ..scene.scene_file import unique_name

        body, notes = job["result"]
        if body is None:
            self.say(notes, error=True)
            return False
        bodies = self.world.bodies
        body.name = unique_name(body.name, {b.name for b in bodies})  # the same file twice: "name (2)"
        ground = ground_for(body, bodies, self.camera.target)
        if ground is not None:
            bodies.append(ground)
            self.say(f"the scene has no ground: added one at height {ground.pose[1, 3]:.3g} "
                     f"for {body.name} to land on")
        place_body(body, bodies, self.camera.target)
        body.home = body.pose.copy()  # R puts it back here
        odd = size_note(body, bodies)
        bodies.append(body)
        self.selected = len(bodies) - 1
        n = len(body.pieces) if body.pieces is not None else 0
        pieces = f", {n} convex piece{'s' if n > 1 else ''}" if n else ""
        self.say(f"added {body.name} ({len(body.faces)} triangles, {body.motion}{pieces})")
        for note in notes:
            self.say(note)
        if odd:
            self.say(odd, error=True)
        self.frame_camera()
        return True

    # -- scenes ----------------------------------------------------------------

    def load_scene(self, path, wait=False, echo=False):
        """Load a scene file in a background thread; the current scene stays until it is ready.

        Decomposition and tree builds can take seconds on a first load, so the
        window keeps drawing and answering meanwhile; :meth:`poll` (called every
        frame) swaps the new world in. Before that, a copy of the new world runs a
        frame in the same thread (:func:`app.warmup.warm_up_world`): on a cold
        kernel cache the scene's kernels compile there, not in the window's first
        frame. ``wait=True`` blocks (scripts, tests); ``echo=True`` also prints the
        progress on stderr.
        """
        if self._loading is not None or self._queue:
            what = os.path.basename((self._loading or self._queue[0])["path"])
            self.say(f"{what} is still loading; wait for it", error=True)
            return False

        def work(progress):
            from ..scene.loader import load_scene
            from ..scene.scene_file import SceneError

            try:
                world, errors = load_scene(path, progress=progress)
                if world is not None:
                    from ..warmup import warm_up_world

                    warm_up_world(world, progress=progress)
                return world, errors
            except SceneError as exc:
                return None, [str(exc)]

        job = {"kind": "scene", "path": path, "work": work, "echo": echo}
        self._queue.append(job)
        self._start_next()
        if wait:
            self._wait_for(job)
        return True

    def _start_next(self):
        """Start the next queued load in a worker thread, unless one is running."""
        if self._loading is not None or not self._queue:
            return
        job = self._queue.popleft()
        job.update(message="reading", fraction=None, result=None, error=None, start=time.monotonic())
        if job.get("prepare"):
            job["prepare"]()

        def progress(stage, fraction):
            job["message"], job["fraction"] = stage, fraction

        def run():
            from ..progress import TerminalProgress, tee

            terminal = TerminalProgress() if job["echo"] else None
            try:
                job["result"] = job["work"](tee(progress, terminal))
            except Exception as exc:  # never lose the viewer to a loader bug
                job["error"] = f"{job['path']}: loading failed ({type(exc).__name__}: {exc})"
            finally:
                if terminal is not None:
                    terminal.close()

        job["thread"] = threading.Thread(target=run, name=f"{job['kind']}-loader", daemon=True)
        self._loading = job
        job["thread"].start()

    def _wait_for(self, job):
        """Block until ``job`` (and every load queued before it) has finished and been polled in."""
        while not job.get("done") and (self._loading is not None or self._queue):
            if self._loading is None:
                self._start_next()
            self._loading["thread"].join()
            self.poll()

    def poll(self):
        """Finish a background load that is done (swap a scene in, place a mesh body) and start the
        next queued one; returns True when one finished."""
        job = self._loading
        if job is None or job["thread"].is_alive():
            return False
        self._loading = None
        try:
            if job.get("error"):
                self.say(job["error"], error=True)
                job["added"] = False
            elif job["kind"] == "mesh":
                job["added"] = self._place_mesh(job)
            else:
                self._swap_scene(job)
        finally:
            job["done"] = True
            self._start_next()
        return True

    def _swap_scene(self, state):
        """Make a loaded scene the current one (unless nothing in it loaded)."""
        world, errors = state["result"]
        for text in errors:
            self.say(text, error=True)
        if world is None:
            return
        if not world.bodies:
            self.say(f"{state['path']}: no body could be loaded; keeping the current scene", error=True)
            return
        world.set_broad_phase(self.world.broad_phase_name)  # the user's choices outlive the scene
        world.ccd = self.world.ccd
        self._carry_narrow_choice(world)
        for name in ("iterations", "friction", "restitution", "allow_sleep"):  # and the panel's solver settings
            setattr(world.dynamics, name, getattr(self.world.dynamics, name))
        self.world = world
        self.scene_path = state["path"]
        self.selected = None
        self.depth = 0
        self.frame_camera()
        name = getattr(getattr(world, "scene", None), "name", os.path.basename(state["path"]))
        self.say(f"loaded scene {name!r}: {len(world.bodies)} bodies")
        if "triangles" not in self._chosen:
            # Bodies at rest on each other overlap by the solver's slop, so every touching face
            # would be red: a physics scene shows its manifolds, and T the exact triangles.
            self.flags["triangles"] = not any(b.moves for b in world.bodies)

    @property
    def loading(self):
        """``(path, message, seconds)`` of a load in progress, or None."""
        s = self._loading
        if s is None:
            return None
        return s["path"], s["message"], time.monotonic() - s["start"]

    @property
    def loading_fraction(self):
        """How far the current stage of the load is (0..1), or None when unknown or not loading."""
        return None if self._loading is None else self._loading["fraction"]

    def do_save_scene(self, _arg, _shift):
        self.save_scene()

    def save_scene(self, path=None):
        """Write the scene with every body where it is now (atomic); returns the path written or None.

        ``path`` (default: the scene's file, else ``scene.toml`` in the screenshot folder) is
        written in place, unless it is an example scene: those are never touched, and a
        copy of the same name in the user's data folder is written (and updated by the next
        save) instead; the message says where.
        """
        from ..scene.loader import body_spec
        from ..scene.scene_file import SceneSpec, leading_comments, save_path, save_scene, unique_name

        source = path or self.scene_path or os.path.join(self.screenshot_dir, "scene.toml")
        target, copy = save_path(source)
        bodies, skipped = [], []
        for b in self.world.bodies:
            try:
                spec = body_spec(b)
            except ValueError:
                skipped.append(b.name)
                continue
            spec.name = unique_name(spec.name, {s.name for s in bodies})  # the file reads back whole
            bodies.append(spec)
        base = getattr(self.world, "scene", None)
        spec = SceneSpec(bodies=bodies, name=getattr(base, "name", "scene"), dt=self.world.dt,
                         gravity=tuple(float(g) for g in self.world.dynamics.gravity),
                         category=getattr(base, "category", None))
        header = leading_comments(source)
        if copy:
            header += [""] * bool(header) + [f"A copy of the example scene {source}, saved from the viewer (F5)."]
        try:
            if copy:
                os.makedirs(os.path.dirname(target), exist_ok=True)
            save_scene(target, spec, header=header)
        except OSError as exc:
            self.say(f"{target}: cannot save the scene ({exc.strerror or exc}); nothing was changed", error=True)
            return None
        if not copy:
            self.scene_path = target
        where = f"a copy of the example scene, in {target}" if copy else target
        self.say(f"saved {len(bodies)} bodies to {where}"
                 + (f" (skipped {', '.join(skipped)}: no file)" if skipped else ""))
        return target

    def do_next_scene(self, _arg, _shift):
        from ..scene.scene_file import scene_registry

        scenes = list(scene_registry().values())
        if not scenes:
            self.say("no example scenes in assets/scenes", error=True)
            return
        try:
            k = (scenes.index(self.scene_path) + 1) % len(scenes)
        except ValueError:
            k = 0
        self.say(f"loading {os.path.basename(scenes[k])} ...")
        self.load_scene(scenes[k])
