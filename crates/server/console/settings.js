// The deployment's settings, given by the server as <meta name="basin-..."> elements of the
// page (no inline script is allowed to carry them).

function meta(name) {
  return document.querySelector(`meta[name="basin-${name}"]`)?.getAttribute('content') || null;
}

/** Basemap URL template with {z}, {x}, {y}, or null for none. */
export const basemapUrl = meta('basemap');
/** Attribution text shown under the map with the basemap. */
export const basemapAttribution = meta('basemap-attribution') || '';
/** The feature whose status messages are the console's banner. */
export const featureId = meta('feature') || 'Console';
