"""The web layer: the HTTP routes by area, each module with its handlers and its routes' OpenAPI description
(proctor.web.routes puts them in one table for the app factory); errors become status codes in one place,
proctor.web.status."""
