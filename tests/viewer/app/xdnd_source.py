"""The source side of an X11 drag and drop (freedesktop XDND, version 5), in python-xlib,
so a test can drop files on a real window as a file manager would.

What the source does (https://www.freedesktop.org/wiki/Specifications/XDND/):
  1. own the selection XdndSelection, which carries the dropped data;
  2. send the target XdndEnter (our window, version, the types we offer), then
     XdndPosition (where the pointer is, in root coordinates, and the action);
  3. wait for XdndStatus: the target says whether it accepts the drop there;
  4. send XdndDrop; the target converts XdndSelection to a type it chose
     (text/uri-list for files), which reaches us as a SelectionRequest: we write the
     data on the requestor's property and answer with SelectionNotify;
  5. wait for XdndFinished: the target says it took the data.
No pointer moves and no button is pressed: the messages are all a target sees of a drag.
"""
import os
import select
import time
import urllib.parse

from Xlib import X, Xatom
from Xlib import error as xerror
from Xlib import display as xdisplay
from Xlib.protocol import event as xevent
from Xlib.protocol import request as xrequest

XDND_VERSION = 5
URI_LIST = "text/uri-list"


class DropError(Exception):
    """The drop did not go through; the message says at which step."""


def file_uri(path):
    # Percent-encoded, as file managers send them; the target decodes (GLFW does).
    return "file://" + urllib.parse.quote(os.path.abspath(path))


def uri_list(paths):
    """text/uri-list: one URI a line, each line ended by CRLF (RFC 2483)."""
    return "".join(file_uri(p) + "\r\n" for p in paths).encode()


class DropResult:
    def __init__(self):
        self.accepted = False      # XdndStatus said yes
        self.action = None         # ...with this action's atom name
        self.served = []           # the targets of the SelectionRequests we answered
        self.finished_ok = False   # XdndFinished said the data was taken


class XdndSource:
    """A connection to the display with a small unmapped window that sources drags."""

    def __init__(self, display_name):
        self.d = xdisplay.Display(display_name)
        self.root = self.d.screen().root
        # Never mapped: it only names us in the messages and owns the selection.
        # PropertyChangeMask is for server_time().
        self.win = self.root.create_window(0, 0, 1, 1, 0, X.CopyFromParent, X.InputOnly,
                                           X.CopyFromParent, event_mask=X.PropertyChangeMask)
        self.data = b""  # what a SelectionRequest for text/uri-list gets

    def close(self):
        self.d.close()

    def atom(self, name):
        return self.d.intern_atom(name)

    # --- finding the target ------------------------------------------------------------

    def window_name(self, win):
        """_NET_WM_NAME (UTF-8), else WM_NAME; None when the window has neither."""
        p = win.get_full_property(self.atom("_NET_WM_NAME"), self.atom("UTF8_STRING"))
        if p is not None:
            return p.value.decode(errors="replace")
        p = win.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
        if p is not None:
            return p.value.decode("latin-1") if isinstance(p.value, bytes) else str(p.value)
        return None

    def xdnd_version(self, win):
        """The XdndAware version a window announces, or None when it takes no drops."""
        p = win.get_full_property(self.atom("XdndAware"), Xatom.ATOM)
        return p.value[0] if p is not None and len(p.value) else None

    def window_pid(self, win):
        """_NET_WM_PID: the process that made the window (GLFW sets it), or None."""
        p = win.get_full_property(self.atom("_NET_WM_PID"), Xatom.CARDINAL)
        return p.value[0] if p is not None and len(p.value) else None

    def find_window(self, pid, name, timeout=30.0):
        """The viewable top-level window of process `pid` whose title starts with `name`,
        once it takes drops (XdndAware). Matching the pid means a window of an earlier
        process, not yet destroyed by the server, is never taken. Under Xvfb there is no
        window manager, so top-level windows are the root's children (a manager would
        reparent them)."""
        deadline = time.time() + timeout
        while True:
            for w in self.root.query_tree().children:
                try:
                    title = self.window_name(w)
                    if (title is not None and title.startswith(name) and self.window_pid(w) == pid
                            and w.get_attributes().map_state == X.IsViewable
                            and self.xdnd_version(w) is not None):
                        return w
                except xerror.BadWindow:  # it went away while we looked
                    continue
            if time.time() > deadline:
                raise DropError(f"no viewable window {name!r} of process {pid} with XdndAware "
                                f"after {timeout:.0f} s")
            time.sleep(0.1)

    # --- the drop ---------------------------------------------------------------------------

    def server_time(self):
        """A timestamp of the server's clock, for the selection and the messages: the one
        of the PropertyNotify that a zero-length append to our own window causes (ICCCM
        2.1: CurrentTime is not good enough to own a selection)."""
        self.win.change_property(Xatom.WM_NAME, Xatom.STRING, 8, b"", mode=X.PropModeAppend)
        ev = self._wait(lambda e: e.type == X.PropertyNotify and e.window == self.win, 5.0,
                        "the PropertyNotify that gives a server timestamp")
        return ev.time

    def drop(self, target, paths, timeout=10.0):
        """Drops `paths` on the middle of `target`. Returns a DropResult; raises DropError
        with the step that failed when the target does not answer in time."""
        res = DropResult()
        self.data = uri_list(paths)
        t = self.server_time()
        sel = self.atom("XdndSelection")
        self.win.set_selection_owner(sel, t)
        if self.d.get_selection_owner(sel) != self.win:
            raise DropError("could not own the XdndSelection selection")
        version = min(XDND_VERSION, self.xdnd_version(target) or 0)
        x, y = self._middle_in_root(target)
        copy = self.atom("XdndActionCopy")
        try:
            # One type, so it fits in the message (bit 0 of l[1] clear: no XdndTypeList).
            self._send(target, "XdndEnter", [self.win.id, version << 24, self.atom(URI_LIST), 0, 0])
            self._send(target, "XdndPosition", [self.win.id, 0, (x << 16) | y, t, copy])
            status = self._wait_message(target, "XdndStatus", timeout)
            res.accepted = bool(status[1] & 1)
            res.action = self.d.get_atom_name(status[4]) if status[4] else None
            if not res.accepted:
                self._send(target, "XdndLeave", [self.win.id, 0, 0, 0, 0])
                return res
            self._send(target, "XdndDrop", [self.win.id, 0, t, 0, 0])
            finished = self._wait_message(target, "XdndFinished", timeout, res.served)
            # The spec has the answer in bit 0 of l[1]; GLFW puts the number of bytes it
            # read there, so any non-zero value says yes.
            res.finished_ok = finished[1] != 0
            return res
        finally:
            # Give the selection up (owner None): the drop is over either way.
            xrequest.SetSelectionOwner(display=self.d.display, window=X.NONE, selection=sel, time=t)
            self.d.flush()

    def _middle_in_root(self, target):
        g = target.get_geometry()
        pos = self.root.translate_coords(target, g.width // 2, g.height // 2)
        return pos.x, pos.y

    def _send(self, target, kind, longs):
        ev = xevent.ClientMessage(window=target, client_type=self.atom(kind), data=(32, longs))
        # Event mask 0: delivered to the client that created the target window.
        target.send_event(ev, event_mask=0)
        self.d.flush()

    def _wait_message(self, target, kind, timeout, served=None):
        """The data (five longs) of the next `kind` ClientMessage from `target`."""
        a = self.atom(kind)
        ev = self._wait(lambda e: (e.type == X.ClientMessage and e.client_type == a
                                   and e.data[1][0] == target.id), timeout, kind, served)
        return ev.data[1]

    def _wait(self, pred, timeout, what, served=None):
        """The first event for which `pred` holds, answering SelectionRequests meanwhile
        (their targets are appended to `served`)."""
        deadline = time.time() + timeout
        while True:
            while self.d.pending_events():
                ev = self.d.next_event()
                if ev.type == X.SelectionRequest:
                    target = self._serve(ev)
                    if served is not None:
                        served.append(target)
                elif pred(ev):
                    return ev
            left = deadline - time.time()
            if left <= 0:
                got = f" (served {served})" if served else ""
                raise DropError(f"no {what} within {timeout:.0f} s{got}")
            select.select([self.d], [], [], min(left, 0.5))

    def _serve(self, req):
        """Answers a SelectionRequest: text/uri-list gets our list, TARGETS the types we
        have, anything else a refusal (property None). Returns the target's name."""
        uri, targets = self.atom(URI_LIST), self.atom("TARGETS")
        prop = req.property or req.target  # ICCCM: None from an obsolete client
        if req.target == uri:
            req.requestor.change_property(prop, uri, 8, self.data)
        elif req.target == targets:
            req.requestor.change_property(prop, Xatom.ATOM, 32, [targets, uri])
        else:
            prop = X.NONE
        reply = xevent.SelectionNotify(time=req.time, requestor=req.requestor, selection=req.selection,
                                       target=req.target, property=prop)
        req.requestor.send_event(reply, event_mask=0)
        self.d.flush()
        return self.d.get_atom_name(req.target)
