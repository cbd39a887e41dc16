// Placeholder while the banner is written.
export function startBanner() { return () => {}; }
