"""albumen import-sigal: a Sigal configuration read without running it, turned into an albumen.toml
that Albumen's own loader accepts, every setting accounted for."""

from __future__ import annotations

from albumen.importers.pyconf import read_pyconf


# ------------------------------------------------------------------------------------------ pyconf
def test_literals_are_read_as_python_would_and_nothing_is_run(tmp_path):
    marker = tmp_path / "ran"
    conf = read_pyconf(
        (
            "import os\n"
            f"open({str(marker)!r}, 'w').write('x')\n"
            f"__import__('pathlib').Path({str(marker)!r}).touch()\n"
            "title = 'Sea ' 'and ' + 'sky'\n"
            "img_size = (800, 600)\n"
            "offset = -3\n"
            "ratio = -0.5\n"
            "opts = {'quality': 90, 'flags': [True, False, None], 'pair': (1, -2)}\n"
            "plugins = ['sigal.plugins.zip_gallery']\n"
            "plugins += ['sigal.plugins.feeds']\n"
            "source = os.path.join('a', 'b')\n"
            "theme = THEME\n"
            "author = f'{title}!'\n"
            "plain = f'no fields'\n"
            "sizes = [x * 2 for x in (1, 2)]\n"
            "later = 1\n"
            "later = 2\n"
            "first, second = 'a', 'b'\n"
            "exec_me = eval('1')\n"
        ).encode(),
        "sigal.conf.py",
    )
    values = {name: a.value for name, a in conf.values.items()}
    assert values == {
        "title": "Sea and sky", "img_size": (800, 600), "offset": -3, "ratio": -0.5,
        "opts": {"quality": 90, "flags": [True, False, None], "pair": (1, -2)},
        "plugins": ["sigal.plugins.zip_gallery", "sigal.plugins.feeds"], "plain": "no fields", "later": 2,
        "first": "a", "second": "b",
    }
    unread = {name: u.why for name, u in conf.unread.items()}
    assert unread == {
        "source": "computed: a call (os.path.join('a', 'b'))",
        "theme": "computed: a name (THEME)",
        "author": "computed: an f-string (f'{title}!')",
        "sizes": "computed: a list comprehension ([x * 2 for x in (1, 2)])",
        "exec_me": "computed: a call (eval('1'))",
    }
    assert [s.line for s in conf.statements] == [2, 3]  # the two calls, listed, not run
    assert not marker.exists()
    assert conf.values["plugins"].line == 9 and conf.values["plugins"].end_line == 10


def test_settings_set_where_only_running_the_file_decides_are_not_read():
    conf = read_pyconf(
        b"img_size = (800, 600)\nif DEBUG:\n    img_size = (640, 480)\n"
        b"plugins = ['a']\nplugins.append('b')\nopts = {'q': 1}\nopts['q'] = 2\n",
        "c.py",
    )
    assert conf.values == {}
    assert conf.unread["img_size"].why == "set in an if statement (line 2)"
    assert conf.unread["plugins"].why.startswith("changed by an expression statement (plugins.append('b'))")
    assert conf.unread["opts"].why.startswith("changed by an assignment to a part of it")
