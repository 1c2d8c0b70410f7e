"""The web layer: what every route shares (proctor.web.status: errors become status codes there, and only there;
reading a request's input; reads off the event loop; files as responses; the OpenAPI description of a route)."""
