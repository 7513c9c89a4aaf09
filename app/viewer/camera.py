"""An orbit camera: yaw, pitch, distance around a target. GL-free (numpy matrices).

Mouse: left-drag orbits, right- or middle-drag pans, the wheel zooms. The
window pushes these events here; the renderer takes :meth:`view` and
:meth:`projection`.
"""

import math

import numpy as np


# The camera's distance from its target stays within these (scene units).
MIN_DISTANCE, MAX_DISTANCE = 1e-6, 1e9


def perspective(fovy_deg, aspect, near, far):
    """(4, 4) OpenGL perspective projection."""
    f = 1.0 / math.tan(math.radians(fovy_deg) / 2)
    m = np.zeros((4, 4))
    m[0, 0] = f / aspect
    m[1, 1] = f
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def look_at(eye, target, up):
    """(4, 4) view matrix."""
    f = target - eye
    f = f / np.linalg.norm(f)
    s = np.cross(f, up)
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


class OrbitCamera:
    """Yaw/pitch/distance around ``target``; y is up."""

    def __init__(self, target=(0.0, 0.5, 0.0), distance=6.0, yaw=0.6, pitch=0.45, fovy=45.0):
        self.target = np.array(target, float)
        self.distance = float(distance)
        self.yaw = float(yaw)
        self.pitch = float(pitch)
        self.fovy = float(fovy)
        self.width, self.height = 1280, 720

    @property
    def eye(self):
        cp = math.cos(self.pitch)
        d = np.array([cp * math.sin(self.yaw), math.sin(self.pitch), cp * math.cos(self.yaw)])
        return self.target + self.distance * d

    def view(self):
        return look_at(self.eye, self.target, np.array([0.0, 1.0, 0.0]))

    @property
    def near(self):
        """The near clipping distance: near and far scale with the distance, so tiny and huge
        scenes both fit."""
        return self.distance * 0.01

    @property
    def far(self):
        return self.distance * 1000

    def projection(self):
        return perspective(self.fovy, self.width / max(1, self.height), self.near, self.far)

    def orbit(self, dx, dy):
        self.yaw -= dx * 0.008
        self.pitch = float(np.clip(self.pitch - dy * 0.008, -1.5, 1.5))

    def pan(self, dx, dy):
        right, up = self.screen_axes()
        scale = self.distance * 0.0015
        self.target = self.target - right * dx * scale - up * dy * scale

    def zoom(self, clicks):
        clicks = float(np.clip(clicks, -50.0, 50.0))  # one event never jumps by more than 200x
        self.distance = float(np.clip(self.distance * (0.9 ** clicks), MIN_DISTANCE, MAX_DISTANCE))

    def screen_axes(self):
        """World directions of the screen's right and up."""
        v = self.view()
        return v[0, :3].copy(), v[1, :3].copy()

    def frame(self, lo, hi):
        """Fit the box ``[lo, hi]`` in view (a box that is not finite leaves the camera as it is;
        the distance stays within the zoom's range, so a box too large to fit is looked at from
        the farthest distance)."""
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            return
        with np.errstate(over="ignore"):  # a radius past 1e154 squares to inf: the farthest distance
            radius = max(1e-6, float(np.linalg.norm(hi / 2 - lo / 2)))
        half = math.radians(self.fovy) / 2
        aspect = self.width / max(1, self.height)
        half = min(half, math.atan(math.tan(half) * aspect))  # the narrower of the two fields
        # the bounding sphere touches the view cone's sides at this distance
        self.target = lo / 2 + hi / 2
        self.distance = float(np.clip(radius / math.sin(half), MIN_DISTANCE, MAX_DISTANCE))

    def ray(self, x, y):
        """World ray through window pixel ``(x, y)`` (origin bottom-left): ``(origin, direction)``."""
        ndc = np.array([2 * x / self.width - 1, 2 * y / self.height - 1, -1.0, 1.0])
        inv = np.linalg.inv(self.projection() @ self.view())
        near = inv @ ndc
        far = inv @ np.array([ndc[0], ndc[1], 1.0, 1.0])
        near, far = near[:3] / near[3], far[:3] / far[3]
        d = far - near
        return near, d / np.linalg.norm(d)

    def project(self, p):
        """Window pixel of world point ``p`` (origin bottom-left)."""
        q = self.projection() @ self.view() @ np.append(np.asarray(p, float), 1.0)
        q = q[:3] / q[3]
        return (q[0] + 1) / 2 * self.width, (q[1] + 1) / 2 * self.height
