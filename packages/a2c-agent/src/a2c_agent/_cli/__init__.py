"""The ``a2c-agent`` command: arguments, destinations, rendering, ``watch`` and ``skill``.

A user of the library never imports it. May import anything of the package; nothing of the
package imports it (``__main__`` excepted).
"""
