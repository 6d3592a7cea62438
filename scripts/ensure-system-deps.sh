#!/bin/sh
# Qt's xcb platform plugin (a real window) needs a few X libraries that a bare
# Debian/Ubuntu machine may lack. Install them when missing and we can.
missing=""
for lib in libxcb-cursor.so.0 libxcb-icccm.so.4 libxcb-keysyms.so.1 libxkbcommon-x11.so.0 libEGL.so.1; do
    ldconfig -p 2>/dev/null | grep -q "$lib" || missing="$missing $lib"
done
[ -z "$missing" ] && exit 0
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing X libraries for Qt:$missing"
    apt-get update -qq >/dev/null && apt-get install -y -qq libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 \
        libxkbcommon-x11-0 libegl1 libxcb-xinerama0 libxcb-randr0 libxcb-render-util0 libxcb-shape0 \
        libxcb-image0 >/dev/null
else
    echo "note: Qt may need these libraries to open a window:$missing (install them with your package manager)"
fi
