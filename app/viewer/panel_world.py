"""The panel's World section: run control (pause / step / reset, time scale) and the world's
parameters, each changing what the step reads (see the session's ``set_*`` actions)."""

from imgui_bundle import imgui

from obbcollide.broad_phase import BROAD_PHASES

from .panel_widgets import GREY, action_button, hint, keyed_checkbox, key_of, mark, tooltip
from .session import GRAVITY_LIMIT, ITERATION_RANGE, STEP_RANGE, TIME_SCALE_RANGE

__all__ = ["draw_world"]


def _run_control(session):
    world = session.world
    action_button(session, "Resume" if world.paused else "Pause", "pause", name="pause")
    imgui.same_line()
    action_button(session, "Step", "single_step", help_text="advance one fixed step (pauses)", name="step")
    imgui.same_line()
    action_button(session, "Reset", "reset", help_text="every body back to its start pose", name="reset")
    imgui.set_next_item_width(-90)
    changed, scale = imgui.slider_float("time scale", session.time_scale, *TIME_SCALE_RANGE, "x%.2f",
                                        imgui.SliderFlags_.logarithmic)
    mark(session, "time_scale")
    tooltip("simulated seconds per real second; the fixed step stays the same, more or fewer steps run "
            "per frame (at most %d)" % world.max_steps)
    if changed:
        session.set_time_scale(scale)
    imgui.text_colored(GREY, f"time {world.time:.2f} s, {world.stats.get('steps', 0)} steps this frame")


def _parameters(session):
    world, dyn = session.world, session.world.dynamics
    imgui.set_next_item_width(-90)
    changed, g = imgui.drag_float3("gravity", [float(x) for x in dyn.gravity], 0.05, -GRAVITY_LIMIT,
                                   GRAVITY_LIMIT, "%.2f")
    mark(session, "gravity")
    tooltip("units/s^2 (y is up); drag, or Ctrl+click to type; every body wakes")
    if changed:
        session.set_gravity(g)
    if imgui.small_button("zero g"):
        session.set_gravity((0.0, 0.0, 0.0))
    mark(session, "zero_g")
    imgui.same_line()
    if imgui.small_button("earth"):
        session.set_gravity((0.0, -9.81, 0.0))
    mark(session, "earth_g")

    imgui.set_next_item_width(-90)
    hz = 1.0 / world.dt
    changed, hz = imgui.slider_float("step (Hz)", hz, 1.0 / STEP_RANGE[1], 1.0 / STEP_RANGE[0], "%.0f Hz",
                                     imgui.SliderFlags_.logarithmic)
    mark(session, "fixed_step")
    tooltip(f"the fixed step: {world.dt * 1000:.2f} ms; a frame runs the steps its time allows")
    if changed and hz > 0:
        session.set_fixed_step(1.0 / hz)

    imgui.set_next_item_width(-90)
    changed, n = imgui.slider_int("iterations", dyn.iterations, *ITERATION_RANGE)
    mark(session, "iterations")
    tooltip("solver velocity iterations per step (it stops earlier once the contacts settle)")
    if changed:
        session.set_iterations(n)

    imgui.set_next_item_width(-90)
    changed, mu = imgui.slider_float("friction", dyn.friction, 0.0, 2.0, "%.2f")
    mark(session, "friction")
    if changed:
        session.set_friction(mu)
    imgui.set_next_item_width(-90)
    changed, e = imgui.slider_float("restitution", dyn.restitution, 0.0, 1.0, "%.2f")
    mark(session, "restitution")
    if changed:
        session.set_restitution(e)
    own = sum(1 for b in world.bodies if b.friction is not None or b.restitution is not None)
    hint("defaults for bodies without their own values in the scene file; every contact reads them "
         f"at each step, existing ones included ({own} of {len(world.bodies)} bodies have their own)")

    clicked, on = imgui.checkbox("sleeping", dyn.allow_sleep)
    mark(session, "sleeping")
    tooltip("resting islands fall asleep (cheap, and still); off: every body stays awake")
    if clicked:
        session.set_sleeping(on)
    imgui.same_line()
    imgui.text_colored(GREY, f"{dyn.stats.get('sleeping', 0)} asleep")
    if keyed_checkbox(session, "continuous detection", world.ccd, key_of("ccd"),
                      "speculative contacts from each fast body's sweep: it stops at what it would pass",
                      name="ccd"):
        session.do_ccd(None, False)
    names = list(BROAD_PHASES)
    imgui.set_next_item_width(-90)
    current = names.index(world.broad_phase_name) if world.broad_phase_name in names else 0
    changed, k = imgui.combo("broad phase", current, names)
    mark(session, "broad_phase")
    tooltip(f"candidate pairs from the bodies' boxes ({key_of('broad_phase')} cycles them)")
    if changed:
        session.set_broad_phase(names[k])


def draw_world(session):
    _run_control(session)
    imgui.separator_text("Parameters")
    _parameters(session)
    hint("a scene file sets the gravity and the step; the other settings stay as set when another "
         "scene loads")
