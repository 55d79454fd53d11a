"""`kubesched ui`: a local web app over the simulator's Python API (docs/ui.md).

`workspace` holds the manifests being edited and what their last simulation decided;
`server` is the Starlette app and its JSON endpoints; `static/` is the page itself
(plain HTML, CSS and JavaScript, nothing fetched from the network).
"""
