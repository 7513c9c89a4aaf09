"""The contact manifolds of one step as flat rows, and how one step's rows become the next's.

A :class:`ContactStore` holds one row per manifold (four point slots each),
sorted by key (body row A, body row B, piece of A, piece of B, sub-key), as
Box2D's and Jolt's contact pools: taking, joining and sorting rows moves each
record once. The rows of a step are made in three compiled passes over
records seen as machine words (:attr:`ContactStore.words`, each field from its
first word ``_W_*``):

- :func:`pack_rows` writes a narrow-phase batch's manifolds into given rows;
- :func:`next_store` joins the rows kept from the last step (both bodies at
  rest) and the fresh ones in key order, finds the old row each fresh row
  continues by walking both in key order, and carries ages and warm-start
  impulses over point by point (:func:`_carry_row`). When the rows are those
  of the last step (a resting pile with a few bodies awake), they are
  updated where they are instead of copied;
- :func:`touch_events` finds the touching body pairs and compares them with
  the last step's (begin, persist, end).
"""

import numpy as np

from obbcollide._jit import njit
from obbcollide.manifold import KIND_NAMES

__all__ = ["ContactStore", "pack_rows", "next_store", "touch_events", "sort_store", "rows_array", "store_columns"]


class ContactStore:
    """The manifolds of one step, one row each, sorted by :attr:`keys`.

    Attributes
    ----------
    keys : (m, 5) int64
        Body row of A, body row of B (A < B), piece of A, piece of B, sub-key
        (a triangle group against a mesh; 0 otherwise).
    count : (m,) int64
        Points in use (1 to 4) of each row's four slots.
    normal : (m, 3) float64
        From A towards B, world.
    kind : (m,) int64
        Index into :data:`collision.manifold.KIND_NAMES` (then other kinds pair functions name).
    tests : (m,) int64; sat_depth : (m,) float64
        As :class:`collision.manifold.Manifold`.
    sat : (m, 3) int64
        The hull-hull SAT feature cache (-1: none).
    points_a, points_b : (m, 4, 3) float64
    depths : (m, 4) float64
        Penetration (> 0) or minus the gap.
    ids : (m, 4) int64
        Feature ids.
    age : (m, 4) int64
    impulse : (m, 4, 3) float64
        Accumulated normal and tangent impulses (what the solver reads and writes).
    frozen : (m,) bool
        Carried unchanged from the last step (both bodies rest).
    data : (m,) structured array of :attr:`DTYPE`
        The rows; each attribute above is a view of one of its fields.
    """

    _FIELDS = {"keys": ((5,), np.int64), "count": ((), np.int64), "normal": ((3,), np.float64),
               "kind": ((), np.int64), "tests": ((), np.int64), "sat_depth": ((), np.float64),
               "sat": ((3,), np.int64), "points_a": ((4, 3), np.float64), "points_b": ((4, 3), np.float64),
               "depths": ((4,), np.float64), "ids": ((4,), np.int64), "age": ((4,), np.int64),
               "impulse": ((4, 3), np.float64), "frozen": ((), np.bool_)}
    # One record per row: taking, joining and sorting rows moves each row once, not each field.
    DTYPE = np.dtype([(name, dtype, shape) for name, (shape, dtype) in _FIELDS.items()], align=True)

    def __init__(self, m=0, data=None, **arrays):
        self.data = rows_array(m, zero=True) if data is None else data
        for name, arr in arrays.items():
            self.data[name] = arr

    @property
    def data(self):
        """The rows, a (m,) record array of :attr:`DTYPE` (for a store made :meth:`of_words`, made over
        its words when first asked for)."""
        d = self._data
        if d is None:
            words = self._cache["words"]
            d = self._data = np.ndarray((len(words),), self.DTYPE, buffer=words)
        return d

    @data.setter
    def data(self, value):
        self._data = value
        self._cache = {}  # the views below, made once per array: a view of records costs microseconds

    def _words_as(self, dtype):
        words = self._cache.get("words")
        if words is not None:  # (a store made of words: its reals are the same memory)
            return words.view(dtype)
        d = self._data
        w = self.DTYPE.itemsize // 8
        if d.flags.c_contiguous:  # (numpy's view of a record array checks every field in Python first)
            return np.ndarray((len(d), w), dtype, buffer=d)
        return d.view(dtype).reshape(len(d), w)

    def __len__(self):
        words = self._cache.get("words")
        return len(self._data) if words is None else len(words)

    @property
    def words(self):
        """:attr:`data` as (m, w) int64 words (a view; the first five words of a row are its key)."""
        got = self._cache.get("words")
        if got is None:
            got = self._cache["words"] = self._words_as(np.int64)
        return got

    def take(self, index):
        """A store of the rows ``index`` (an index array or a mask), copied."""
        index = np.asarray(index)
        if index.dtype == np.bool_:
            index = np.flatnonzero(index)
        return ContactStore(data=self.data.take(index))  # (numpy's take: 10x faster than data[index] on records)

    @property
    def reals(self):
        """:attr:`data` as (m, w) float64 words (a view of the same memory as :attr:`words`)."""
        got = self._cache.get("reals")
        if got is None:
            got = self._cache["reals"] = self._words_as(np.float64)
        return got

    @classmethod
    def of_words(cls, words):
        """A store over ``words`` (m, w) int64, C-contiguous rows as :attr:`words` gives them (what a
        compiled pass made), without a copy."""
        st = cls.__new__(cls)
        st._data = None  # (its record array is made when a field is first read: numpy takes microseconds)
        st._cache = {"words": words}
        return st

    @classmethod
    def from_batch(cls, batch, rows, keys, flip=False):
        """The pairs of a :class:`collision.hull_batch.ManifoldBatch` that have points, as rows in one
        compiled pass; ``keys`` (k, 5), ``rows`` (k, 3) the SAT caches (None: -1). ``flip``: the
        batch saw B first (normals reversed, points swapped, face kinds swapped)."""
        hit = batch.count > 0
        st = cls(int(np.count_nonzero(hit)))
        if len(st):
            dest = np.cumsum(hit) - 1
            dest[~hit] = -1
            pack_rows(dest, batch, rows, keys, flip, st)
        return st


def rows_array(m, zero=False):
    """A (m,) record array of :attr:`ContactStore.DTYPE`, uninitialised (or zeroed): made over a byte
    buffer, since numpy takes microseconds to allocate an array of a many-field record type itself."""
    size = m * ContactStore.DTYPE.itemsize
    buf = np.zeros(size, np.uint8) if zero else np.empty(size, np.uint8)
    return np.ndarray((m,), ContactStore.DTYPE, buffer=buf)


def _field(name):
    def get(self):
        got = self._cache.get(name)
        if got is None:
            got = self._cache[name] = self.data[name]
        return got

    def put(self, value):
        self.data[name] = value

    return property(get, put, doc=f"The ``{name}`` column, a view of :attr:`ContactStore.data` (assigning copies).")


for _name in ContactStore._FIELDS:
    setattr(ContactStore, _name, _field(_name))
del _name
# each field's first word in a row (every field starts on a word: the dtype is aligned)
(_W_KEYS, _W_COUNT, _W_NORMAL, _W_KIND, _W_TESTS, _W_SAT_DEPTH, _W_SAT, _W_POINTS_A, _W_POINTS_B, _W_DEPTHS,
 _W_IDS, _W_AGE, _W_IMPULSE) = (ContactStore.DTYPE.fields[name][1] // 8 for name in ContactStore._FIELDS if name != "frozen")
_WORDS = ContactStore.DTYPE.itemsize // 8  # words in a row
_FROZEN_BYTE = ContactStore.DTYPE.fields["frozen"][1]  # the frozen flag's byte in a row
_FACE_A, _FACE_B = KIND_NAMES.index("face_a"), KIND_NAMES.index("face_b")




@njit(cache=True)
def store_columns(words):
    """The columns of a store that the dynamics reads, as views of its rows ``words`` (m, w) int64
    (C-contiguous, :attr:`ContactStore.words`): ``keys (m, 5)``, ``count (m,)``, ``normal (m, 3)``,
    ``points_a, points_b (m, 4, 3)``, ``depths (m, 4)``, ``impulse (m, 4, 3)``, the same memory as the
    store's columns. Unlike those (views of a record array, which numba sees as strided arrays but
    as contiguous ones for a single row), they have one layout whatever the count of rows, so a
    kernel taking them is compiled once."""
    reals = words.view(np.float64)
    m = words.shape[0]
    points = (m, 4, 3)
    inner = (reals.strides[0], 24, 8)
    return (words[:, _W_KEYS:_W_KEYS + 5], words[:, _W_COUNT], reals[:, _W_NORMAL:_W_NORMAL + 3],
            np.lib.stride_tricks.as_strided(reals[:, _W_POINTS_A:], points, inner),
            np.lib.stride_tricks.as_strided(reals[:, _W_POINTS_B:], points, inner),
            reals[:, _W_DEPTHS:_W_DEPTHS + 4], np.lib.stride_tricks.as_strided(reals[:, _W_IMPULSE:], points, inner))


def pack_rows(dest, batch, sat, keys, flip, store):
    """Write the pairs of a :class:`collision.hull_batch.ManifoldBatch` into the rows ``dest`` (k,)
    of ``store`` (-1: skip that pair), every field up to the ages, and the count also of a pair
    without points. ``sat`` (k, 3) the SAT caches or None (-1); ``keys`` (k, 5), or None when the
    rows hold their keys already. ``flip``: the batch saw B first (normals reversed, points
    swapped, face kinds swapped)."""
    sat = _NO_ROWS if sat is None else sat
    keys = _NO_ROWS5 if keys is None else np.ascontiguousarray(keys, dtype=np.int64)
    _pack_kernel(np.ascontiguousarray(dest, dtype=np.int64), keys, batch.count, batch.normal, batch.kind,
                 batch.tests, batch.sat_depth, sat, batch.points_a, batch.points_b, batch.depths, batch.ids,
                 bool(flip), store.words, store.reals)


_NO_ROWS = np.full((0, 3), -1, np.int64)
_NO_ROWS5 = np.zeros((0, 5), np.int64)


@njit(cache=True)
def _pack_kernel(dest, keys, count, normal, kind, tests, sat_depth, sat, points_a, points_b, depths, ids, flip,
                 words, reals):
    sign = -1.0 if flip else 1.0
    for i in range(count.shape[0]):
        m = dest[i]
        if m < 0:
            continue
        if keys.shape[0]:
            for c in range(5):
                words[m, _W_KEYS + c] = keys[i, c]
        words[m, _W_COUNT] = count[i]
        for c in range(3):
            reals[m, _W_NORMAL + c] = sign * normal[i, c]
        kd = kind[i]
        if flip and kd == _FACE_A:
            kd = _FACE_B
        elif flip and kd == _FACE_B:
            kd = _FACE_A
        words[m, _W_KIND] = kd
        words[m, _W_TESTS] = tests[i]
        reals[m, _W_SAT_DEPTH] = sat_depth[i]
        for c in range(3):
            words[m, _W_SAT + c] = sat[i, c] if sat.shape[0] else -1
        pa, pb = (points_b, points_a) if flip else (points_a, points_b)
        for q in range(4):
            for c in range(3):
                reals[m, _W_POINTS_A + 3 * q + c] = pa[i, q, c]
                reals[m, _W_POINTS_B + 3 * q + c] = pb[i, q, c]
            reals[m, _W_DEPTHS + q] = depths[i, q]
            words[m, _W_IDS + q] = ids[i, q]


@njit(borrow=True)
def key_compare(a, i, b, j):
    """-1, 0 or 1 as the key (first five words) of row ``a[i]`` is below, equal to or above ``b[j]``'s."""
    for c in range(5):
        if a[i, c] < b[j, c]:
            return -1
        if a[i, c] > b[j, c]:
            return 1
    return 0


@njit(cache=True)
def in_sorted(values, sorted_set, out):
    """``out[i]``: whether ``values[i]`` is in ``sorted_set``; both ascending (one merge pass)."""
    j = 0
    for i in range(values.shape[0]):
        while j < sorted_set.shape[0] and sorted_set[j] < values[i]:
            j += 1
        out[i] = j < sorted_set.shape[0] and sorted_set[j] == values[i]


@njit(borrow=True)
def _carry_row(nw, nr, ow, orl, tol2, used, match):
    """Ages and impulses of the new row ``nw`` / ``nr`` (one record as int64 / float64 words) from the
    old row ``ow`` / ``orl`` it continues.

    The same ids in the same order (a resting contact): every point continues
    its own. Otherwise each new point takes the old point with its feature
    id, or else the nearest unclaimed old point within ``sqrt(tol2)``
    (Box2D's id matching with a distance fallback for a reference-face switch).
    When the count is unchanged, a touching new point still unmatched takes the
    impulse of the nearest unclaimed old point: of an octagonal patch between two
    turned boxes the reduction keeps four corners, and which of two equally deep
    corners it keeps changes from step to step; without the hand-off that corner
    starts from zero each time and the stack walks sideways.
    """
    c, oc = nw[_W_COUNT], ow[_W_COUNT]
    same = oc == c
    for i in range(c):
        if same and ow[_W_IDS + i] != nw[_W_IDS + i]:
            same = False
    if same:
        for i in range(c):
            match[i] = i
    else:
        for j in range(4):
            used[j] = False
        for i in range(c):
            match[i] = -1
            for j in range(oc):
                if not used[j] and ow[_W_IDS + j] == nw[_W_IDS + i]:
                    match[i] = j
                    used[j] = True
                    break
        for i in range(c):
            if match[i] >= 0:
                continue
            best, bj = tol2, -1
            for j in range(oc):
                if not used[j]:
                    d = 0.0
                    for k in range(3):
                        e = (0.5 * (nr[_W_POINTS_A + 3 * i + k] + nr[_W_POINTS_B + 3 * i + k])
                             - 0.5 * (orl[_W_POINTS_A + 3 * j + k] + orl[_W_POINTS_B + 3 * j + k]))
                        d += e * e
                    if d <= best:
                        best, bj = d, j
            if bj >= 0:
                match[i] = bj
                used[bj] = True
        if oc == c:  # the same number of points: a touching new point takes over a lost one's impulse
            for i in range(c):
                if match[i] >= 0 or nr[_W_DEPTHS + i] < 0.0:
                    continue
                best, bj = np.inf, -1
                for j in range(oc):
                    if not used[j]:
                        d = 0.0
                        for k in range(3):
                            e = nr[_W_POINTS_A + 3 * i + k] - orl[_W_POINTS_A + 3 * j + k]
                            d += e * e
                        if d < best:
                            best, bj = d, j
                if bj >= 0:
                    used[bj] = True
                    for k in range(3):
                        nr[_W_IMPULSE + 3 * i + k] = orl[_W_IMPULSE + 3 * bj + k]
    for i in range(c):
        j = match[i]
        if j >= 0:
            nw[_W_AGE + i] = ow[_W_AGE + j] + 1
            for k in range(3):
                nr[_W_IMPULSE + 3 * i + k] = orl[_W_IMPULSE + 3 * j + k]


@njit(borrow=True)
def _new_row(nw, nr, ow, orl, tol2, used, match):
    """Ages and impulses of a fresh row: zero, then carried from the old row ``ow`` if it has one (else ``ow`` is empty)."""
    c = nw[_W_COUNT]
    for i in range(4):
        nw[_W_AGE + i] = 1 if i < c else 0
        for k in range(3):
            nr[_W_IMPULSE + 3 * i + k] = 0.0
    if ow.shape[0] and ow[_W_COUNT] > 0:
        _carry_row(nw, nr, ow, orl, tol2, used, match)


@njit(borrow=True)
def _sources(rows, old, src):
    """``src[i]``: the row of ``old`` whose key equals row ``i``'s in ``rows`` (-1: none; rows without
    points are skipped); both in key order, so one walk. Returns how many rows have points."""
    j = n = 0
    for i in range(rows.shape[0]):
        src[i] = -1
        if rows[i, _W_COUNT] == 0:
            continue
        n += 1
        while j < old.shape[0] and key_compare(old, j, rows, i) < 0:
            j += 1
        if j < old.shape[0] and key_compare(old, j, rows, i) == 0:
            src[i] = j
    return n


@njit(cache=True)
def _next_store_kernel(ow, orl, kept, frozen, fw, fr, xw, xr, tol2, may_update, out_w, out_r, out_frozen):
    """See :func:`next_store`; returns the number of rows written to ``out_*``, or -1 when the old
    rows were updated where they are."""
    m = ow.shape[0]
    src_f = np.empty(fw.shape[0], np.int64)
    src_x = np.empty(xw.shape[0], np.int64)
    nf = _sources(fw, ow, src_f)
    nx = _sources(xw, ow, src_x)
    nk = 0
    for r in range(m):
        nk += kept[r]
    used = np.empty(4, np.bool_)
    match = np.empty(4, np.int64)
    same = may_update and nk + nf + nx == m  # the same rows as last step, if every fresh one continues an old one
    for i in range(fw.shape[0]):
        same = same and (fw[i, _W_COUNT] == 0 or (src_f[i] >= 0 and not kept[src_f[i]]))
    for i in range(xw.shape[0]):
        same = same and src_x[i] >= 0 and not kept[src_x[i]]
    if same:
        ow0 = np.empty(ow.shape[1], np.int64)  # the old row, kept while it is overwritten
        or0 = ow0.view(np.float64)
        for r in range(m):
            frozen[r] = kept[r]
        for part in range(2):
            w, rl, src = (fw, fr, src_f) if part == 0 else (xw, xr, src_x)
            for i in range(w.shape[0]):
                r = src[i]
                if r < 0:
                    continue
                ow0[:] = ow[r]
                ow[r, :_W_AGE] = w[i, :_W_AGE]
                _new_row(ow[r], orl[r], ow0, or0, tol2, used, match)
        return -1
    # else merge the kept rows, the fresh rows with points and the extra rows, in key order
    none, none_r = np.empty(0, np.int64), np.empty(0)
    i = j = x = k = 0
    while True:
        while i < m and not kept[i]:
            i += 1
        while j < fw.shape[0] and fw[j, _W_COUNT] == 0:
            j += 1
        # the smallest key of the three heads
        pick = -1
        if i < m:
            pick = 0
        if j < fw.shape[0] and (pick < 0 or key_compare(fw, j, ow, i) < 0):
            pick = 1
        if x < xw.shape[0]:
            if pick < 0 or (pick == 0 and key_compare(xw, x, ow, i) < 0) or (pick == 1 and key_compare(xw, x, fw, j) < 0):
                pick = 2
        if pick < 0:
            return k
        if pick == 0:
            out_w[k] = ow[i]
            out_frozen[k] = True
            i += 1
        else:
            w, rl, s, t = (fw, fr, src_f, j) if pick == 1 else (xw, xr, src_x, x)
            out_w[k, :_W_AGE] = w[t, :_W_AGE]
            o = s[t]
            if o >= 0:
                _new_row(out_w[k], out_r[k], ow[o], orl[o], tol2, used, match)
            else:
                _new_row(out_w[k], out_r[k], none, none_r, tol2, used, match)
            out_frozen[k] = False
            if pick == 1:
                j += 1
            else:
                x += 1
        k += 1


def next_store(old, kept, fresh, extra, tol, in_place=True):
    """The store of this step: the rows of ``old`` marked ``kept`` (carried as they are, flagged
    ``frozen``), the rows of ``fresh`` that have points and every row of ``extra``, in key order
    (``fresh`` and ``extra`` each in key order); each new row continues the old row of its key:
    its points take ages and impulses as :func:`_carry_row` matches them (distance fallback
    ``tol``). Returns ``old`` itself, updated in place, when the rows are the old ones (every
    row either kept or continued and none new) and ``in_place``, else a new store."""
    if not len(fresh) and not len(extra) and kept.all():  # all at rest: nothing to join
        old.frozen[:] = True
        return old
    out = ContactStore(data=rows_array(int(np.count_nonzero(kept)) + len(fresh) + len(extra)))
    k = _next_store_kernel(old.words, old.reals, kept, old.frozen, fresh.words, fresh.reals, extra.words, extra.reals,
                           float(tol) ** 2, bool(in_place), out.words, out.reals, out.frozen)
    if k < 0:
        return old
    return ContactStore(data=out.data[:k])


@njit(cache=True)
def _touch_events_kernel(keys, count, depths, n, prev, codes, points, was, stays):
    m = 0
    for r in range(keys.shape[0]):
        pts = 0
        for i in range(count[r]):
            if depths[r, i] >= 0.0:
                pts += 1
        if pts == 0:
            continue
        code = keys[r, 0] * n + keys[r, 1]
        if m > 0 and codes[m - 1] == code:
            points[m - 1] += pts
        else:
            codes[m] = code
            points[m] = pts
            m += 1
    in_sorted(codes[:m], prev, was[:m])
    in_sorted(prev, codes[:m], stays)
    return m


def touch_events(store, n, prev):
    """The body pairs of ``store`` with a point at zero gap or deeper, as codes ``a n + b``
    (ascending, as the store's keys), with their touching points over all piece pairs; and,
    against the last step's codes ``prev`` (ascending): ``was`` (m,) which of them touched then
    and ``stays`` (len(prev),) which of those touch now."""
    m0 = len(store)
    codes = np.empty(m0, np.int64)
    points = np.empty(m0, np.int64)
    was = np.empty(m0, np.bool_)
    stays = np.empty(len(prev), np.bool_)
    m = _touch_events_kernel(store.keys, store.count, store.depths, n, prev, codes, points, was, stays)
    return codes[:m], points[:m], was[:m], stays


def sort_store(store):
    """``store`` with its rows in key order."""
    if len(store) < 2:
        return store
    k = store.keys
    order = np.lexsort((k[:, 4], k[:, 3], k[:, 2], k[:, 1], k[:, 0]))
    if np.all(order[1:] > order[:-1]):
        return store
    return store.take(order)
