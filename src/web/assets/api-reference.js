// Renders /openapi.json with Swagger UI: read-only (no requests are sent from the page), no outside validator.
window.addEventListener('DOMContentLoaded', () => {
  window.SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    supportedSubmitMethods: [],
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    docExpansion: 'list',
    displayOperationId: true,
  });
});
