#!/usr/bin/python3
"""The computer_use driver's helper (docs/computer-use.md): one long-lived process per display.

Run with the system /usr/bin/python3 (python3-pyatspi, python3-gi, gir1.2-gtk-3.0, python3-cairo).
It reads one JSON request per line on stdin and writes one JSON answer per line on stdout:
  {"id": 1, "op": "ping"}                          -> {"id": 1, "ok": true, "python": ..., "width": ..., "height": ...}
  {"id": 2, "op": "tree"}                          -> the accessibility tree: apps, windows, nodes (interactive ones flagged)
  {"id": 3, "op": "shot", "marks": [[n,x,y,w,h]]}  -> {"png": base64}: the screen, with numbered marks drawn when given
Nothing here acts on the screen: clicks and keys are xdotool's (daemon/computer-use/desktop-driver.ts).
"""
import base64
import json
import os
import sys
import time

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("GdkPixbuf", "2.0")
from gi.repository import Gdk  # noqa: E402

try:
    import pyatspi  # noqa: E402
except Exception as error:  # the accessibility half is optional: status says what is missing
    pyatspi = None
    PYATSPI_ERROR = str(error)

try:
    import cairo  # noqa: E402
except Exception:
    cairo = None

try:
    import ctypes  # noqa: E402

    XDO = ctypes.CDLL("libxdo.so.3")
    XDO.xdo_new.restype = ctypes.c_void_p
    XDO.xdo_new.argtypes = [ctypes.c_char_p]
    for _name, _args in (
        ("xdo_move_mouse", [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]),
        ("xdo_mouse_down", [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int]),
        ("xdo_mouse_up", [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int]),
        ("xdo_click_window_multiple", [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint]),
        ("xdo_enter_text_window", [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_uint]),
        ("xdo_send_keysequence_window", [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_uint]),
    ):
        getattr(XDO, _name).argtypes = _args
        getattr(XDO, _name).restype = ctypes.c_int
except Exception:  # no libxdo: the daemon runs the xdotool command instead
    XDO = None
XDO_HANDLE = [None]

MAX_NODES = 4000
MAX_DEPTH = 40

INTERACTIVE = {
    "push button", "toggle button", "check box", "radio button", "text", "password text", "entry",
    "combo box", "menu item", "check menu item", "radio menu item", "menu", "list item", "table cell",
    "tree item", "link", "slider", "spin button", "page tab", "scroll bar", "icon", "button",
    "toggle", "switch", "editbar", "terminal", "document web", "tool bar item",
}
# Widgets whose children only repeat them (a button's label): not descended into, which halves the
# D-Bus round trips of a button-heavy window.
LEAVES = {
    "push button", "toggle button", "check box", "radio button", "link", "scroll bar", "slider", "spin button",
    "text", "password text", "entry", "check menu item", "radio menu item", "progress bar",
}
CONTAINERS_WITH_ITEMS = {"list", "list box", "table", "tree table", "tree"}


def state_names(acc):
    out = set()
    try:
        st = acc.getState()
        for key, name in (
            (pyatspi.STATE_SHOWING, "showing"), (pyatspi.STATE_VISIBLE, "visible"), (pyatspi.STATE_ENABLED, "enabled"),
            (pyatspi.STATE_SENSITIVE, "sensitive"), (pyatspi.STATE_FOCUSED, "focused"), (pyatspi.STATE_FOCUSABLE, "focusable"),
            (pyatspi.STATE_CHECKED, "checked"), (pyatspi.STATE_PRESSED, "pressed"), (pyatspi.STATE_SELECTED, "selected"),
            (pyatspi.STATE_ACTIVE, "active"), (pyatspi.STATE_EDITABLE, "editable"), (pyatspi.STATE_EXPANDED, "expanded"),
        ):
            if st.contains(key):
                out.add(name)
    except Exception:
        pass
    return out


def extents(acc):
    try:
        e = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        return [e.x, e.y, e.width, e.height]
    except Exception:
        return None


def text_of(acc, role):
    if role not in ("text", "password text", "entry", "terminal"):
        return None
    if role == "password text":
        return "(hidden)"
    try:
        t = acc.queryText()
        return t.getText(0, min(t.characterCount, 200))
    except Exception:
        return None


def value_of(acc):
    try:
        v = acc.queryValue()
        return v.currentValue
    except Exception:
        return None


CACHE = {"on": False}


def cache_on():
    """libatspi keeps a cache of roles, names, states and children only for a client that listens
    for events and dispatches them (measured: 5 D-Bus round trips per node without it, none with
    it). Events are dispatched before each tree, after a round trip to every window, so every
    change an app signalled before that call is in the cache when the walk reads it."""
    if CACHE["on"]:
        return
    try:
        pyatspi.Registry.registerEventListener(
            lambda _event: None, "object:children-changed", "object:state-changed", "object:property-change", "object:bounds-changed"
        )
        CACHE["on"] = True
    except Exception:
        CACHE["on"] = None  # no cache: every read is a round trip, still correct


def pump():
    from gi.repository import GLib

    context = GLib.MainContext.default()
    for _ in range(10000):
        if not context.iteration(False):
            break


def tree(req):
    # Boxes cost a D-Bus round trip each: by default only where they are used (the numbered
    # elements, the viewports that clip them, the windows); `all_boxes` for the ax text.
    all_boxes = bool(req.get("all_boxes"))
    if pyatspi is None:
        return {"ok": False, "error": "pyatspi is not importable: " + PYATSPI_ERROR, "code": "no_accessibility"}
    started = time.time()
    cache_on()
    pump()
    desktop = pyatspi.Registry.getDesktop(0)
    # A round trip to each window (its box is needed anyway): what the app signalled before it is
    # now queued here, and the second pump puts it in the cache.
    for app in desktop:
        for win in app or []:
            if win is not None:
                extents(win)
    pump()
    apps = []
    count = [0]
    for app in desktop:
        if app is None:
            continue
        try:
            pid = app.get_process_id()
        except Exception:
            pid = None
        entry = {"name": app.name or "", "pid": pid, "windows": []}
        for win in app:
            if win is None:
                continue
            st = state_names(win)
            if "showing" not in st:
                continue
            nodes = []

            def walk(acc, depth, clip):
                if count[0] >= MAX_NODES or depth > MAX_DEPTH:
                    return
                count[0] += 1
                try:
                    role = acc.getRoleName()
                except Exception:
                    return
                sts = state_names(acc)
                if "showing" not in sts or "visible" not in sts:
                    return
                box = extents(acc) if (all_boxes or depth == 0 or role in INTERACTIVE or role in ("viewport", "scroll pane")) else None
                if box and clip:
                    # What a scrolled viewport or the window cuts off is not on screen: clip the box to it.
                    x1, y1 = max(box[0], clip[0]), max(box[1], clip[1])
                    x2, y2 = min(box[0] + box[2], clip[0] + clip[2]), min(box[1] + box[3], clip[1] + clip[3])
                    box = [x1, y1, max(0, x2 - x1), max(0, y2 - y1)]
                inner = clip
                if box and (depth == 0 or role in ("viewport", "scroll pane")):
                    inner = box
                node = {"depth": depth, "role": role, "name": acc.name or "", "states": sorted(sts), "box": box}
                text = text_of(acc, role)
                if text is not None:
                    node["text"] = text
                if role in ("slider", "spin button", "scroll bar", "progress bar"):
                    value = value_of(acc)
                    if value is not None:
                        node["value"] = value
                node["interactive"] = bool(
                    role in INTERACTIVE and ("enabled" in sts or "sensitive" in sts) and box and box[2] > 0 and box[3] > 0
                )
                if role in CONTAINERS_WITH_ITEMS:
                    node["scrollable"] = True
                nodes.append(node)
                try:
                    n = 0 if role in LEAVES else acc.childCount
                except Exception:
                    n = 0
                # Long lists: only the children on screen matter (the rest are not SHOWING anyway).
                for i in range(min(n, 2000)):
                    try:
                        child = acc.getChildAtIndex(i)
                    except Exception:
                        continue
                    if child is not None:
                        walk(child, depth + 1, inner)

            walk(win, 0, None)
            entry["windows"].append({"title": win.name or "", "role": win.getRoleName(), "active": "active" in st, "box": extents(win), "nodes": nodes})
        apps.append(entry)
    return {"ok": True, "apps": apps, "ms": round((time.time() - started) * 1000, 1)}


def screen_size():
    root = Gdk.get_default_root_window()
    return root.get_width(), root.get_height()


def shot(req):
    root = Gdk.get_default_root_window()
    w, h = root.get_width(), root.get_height()
    pb = Gdk.pixbuf_get_from_window(root, 0, 0, w, h)
    if pb is None:
        return {"ok": False, "error": "the screen could not be read", "code": "capture_failed"}
    marks = req.get("marks") or []
    if cairo is None or not marks:
        ok, data = pb.save_to_bufferv("png", ["compression"], ["1"])
        return {"ok": True, "png": base64.b64encode(data).decode("ascii"), "width": w, "height": h}
    n = w * h
    nc = pb.get_n_channels()
    rs = pb.get_rowstride()
    px = pb.get_pixels()
    if rs != w * nc:  # rows padded: drop the padding first
        px = b"".join(px[y * rs:y * rs + w * nc] for y in range(h))
    buf = bytearray(n * 4)
    buf[0::4] = px[2::nc]
    buf[1::4] = px[1::nc]
    buf[2::4] = px[0::nc]
    surface = cairo.ImageSurface.create_for_data(buf, cairo.FORMAT_RGB24, w, h, w * 4)
    cr = cairo.Context(surface)
    cr.select_font_face("sans", cairo.FONT_SLANT_NORMAL, cairo.FONT_WEIGHT_BOLD)
    cr.set_font_size(12)
    cr.set_line_width(2)
    placed = []

    def free(r):
        return all(r[0] + r[2] <= q[0] or q[0] + q[2] <= r[0] or r[1] + r[3] <= q[1] or q[1] + q[3] <= r[1] for q in placed)

    for number, x, y, bw, bh in marks:
        label = str(number)
        tw = cr.text_extents(label).x_advance + 6
        # The box around the element; the number in a filled tag inside it, in the top-right corner
        # (labels start on the left or in the middle, so the tag hides the least there), else in
        # another corner or just outside when a neighbour's tag is already there.
        cr.set_source_rgb(0.86, 0.08, 0.24)
        cr.rectangle(x + 1, y + 1, max(bw - 2, 1), max(bh - 2, 1))
        cr.stroke()
        spots = [(x + bw - tw, y), (x, y), (x + bw - tw, y + bh - 16), (x, y + bh - 16), (x + bw, y), (x - tw, y), (x, y + bh), (x, y - 16)]
        tag = None
        for sx, sy in spots:
            r = (min(max(sx, 0), w - tw), min(max(sy, 0), h - 16), tw, 16)
            if free(r):
                tag = r
                break
        if tag is None:
            tag = (min(max(x + bw - tw, 0), w - tw), min(max(y, 0), h - 16), tw, 16)
        placed.append(tag)
        cr.set_source_rgb(0.86, 0.08, 0.24)
        cr.rectangle(*tag)
        cr.fill()
        cr.set_source_rgb(1, 1, 1)
        cr.move_to(tag[0] + 3, tag[1] + 12.5)
        cr.show_text(label)
    surface.flush()
    import io

    out = io.BytesIO()
    surface.write_to_png(out)
    return {"ok": True, "png": base64.b64encode(out.getvalue()).decode("ascii"), "width": w, "height": h}


def ping(_req):
    w, h = screen_size()
    return {
        "ok": True,
        "python": sys.version.split()[0],
        "pyatspi": pyatspi is not None,
        "pyatspi_error": None if pyatspi is not None else PYATSPI_ERROR,
        "cairo": cairo is not None,
        "xdo": XDO is not None,
        "width": w,
        "height": h,
    }


def accessible(_req):
    """Whether the accessibility registry answers (the a11y bus is reachable)."""
    if pyatspi is None:
        return {"ok": True, "reachable": False, "why": "pyatspi is not importable: " + PYATSPI_ERROR}
    try:
        desktop = pyatspi.Registry.getDesktop(0)
        return {"ok": True, "reachable": True, "apps": desktop.childCount}
    except Exception as error:
        return {"ok": True, "reachable": False, "why": str(error)}


def xdo():
    if XDO_HANDLE[0] is None:
        XDO_HANDLE[0] = XDO.xdo_new(os.environ.get("DISPLAY", "").encode())
        if not XDO_HANDLE[0]:
            raise RuntimeError("libxdo could not open the display")
    return XDO_HANDLE[0]


def input_steps(req):
    """Mouse and keyboard input through libxdo (xdotool's library), in this process: no command start per action."""
    if XDO is None:
        return {"ok": False, "error": "libxdo.so.3 is not available", "code": "no_xdo"}
    h = xdo()
    for step in req.get("steps") or []:
        kind = step[0]
        if kind == "move":
            rc = XDO.xdo_move_mouse(h, int(step[1]), int(step[2]), 0)
        elif kind == "down":
            rc = XDO.xdo_mouse_down(h, 0, int(step[1]))
        elif kind == "up":
            rc = XDO.xdo_mouse_up(h, 0, int(step[1]))
        elif kind == "click":
            rc = XDO.xdo_click_window_multiple(h, 0, int(step[1]), int(step[2]), int(step[3]) * 1000)
        elif kind == "type":
            rc = XDO.xdo_enter_text_window(h, 0, step[1].encode("utf-8"), 8000)
        elif kind == "key":
            rc = XDO.xdo_send_keysequence_window(h, 0, step[1].encode("utf-8"), 20000)
        elif kind == "sleep":
            time.sleep(float(step[1]) / 1000)
            rc = 0
        else:
            return {"ok": False, "error": "unknown input step " + str(kind), "code": "unknown_op"}
        if rc != 0:
            return {"ok": False, "error": "input step %s failed (libxdo %d)" % (kind, rc), "code": "action_failed"}
    return {"ok": True}


OPS = {"input": input_steps, "ping": ping, "tree": tree, "shot": shot, "accessible": accessible}


def main():
    opened = Gdk.init_check([])
    if not (opened[0] if isinstance(opened, tuple) else opened):
        sys.stdout.write(json.dumps({"id": 0, "ok": False, "error": "cannot open display " + os.environ.get("DISPLAY", "")}) + "\n")
        sys.stdout.flush()
        return 2
    sys.stdout.write(json.dumps({"id": 0, "ok": True, "ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError:
            continue
        op = OPS.get(req.get("op"))
        try:
            answer = op(req) if op else {"ok": False, "error": "unknown op " + str(req.get("op")), "code": "unknown_op"}
        except Exception as error:  # one failed request never ends the helper
            answer = {"ok": False, "error": "%s: %s" % (type(error).__name__, error), "code": "helper_error"}
        answer["id"] = req.get("id")
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
