// What a dataset is, in words: the name of its format and of its type, for the dataset page
// and the project's list of datasets alike.
//
// The dataset record says both: `datasetFormat` (the stored file's extension, or the writer's
// format) and `datasetType` (what the data is, from what the import read). A Shapefile is
// several files that Basin keeps in one .zip (ShpReader reads such a zip, ShpWriter writes
// one), so its record says `.zip` with the type `gisvectordata`: that pair is a Shapefile, not
// just any ZIP archive.

const FORMATS = {
  '.dfs0': 'DFS0 time series', '.dfs1': 'DFS1 line grid', '.dfs2': 'DFS2 grid', '.dfs3': 'DFS3 layered grid',
  '.dfsu': 'DFSU flexible mesh', '.mesh': 'MIKE mesh', '.tif': 'GeoTIFF', '.tiff': 'GeoTIFF', '.asc': 'ASCII grid',
  '.geojson': 'GeoJSON', '.json': 'JSON', '.shp': 'Shapefile', '.zip': 'ZIP archive', '.vtu': 'VTK unstructured grid',
  '.csv': 'CSV', '.xyz': 'XYZ points', '.tiles': 'Tile scheme definition',
};
const TYPES = {
  multidimensional: 'Grid or mesh', timeseries: 'Time series', gisvectordata: 'Features (vector)',
  tiles: 'Map tiles', file: 'File',
};

function formatOf(record) {
  return String(record?.datasetFormat || '').toLowerCase();
}

/** Whether the record is a zipped Shapefile: a .zip the import read as features. */
export function isZippedShapefile(record) {
  return formatOf(record) === '.zip' && record?.datasetType === 'gisvectordata';
}

/** The format's name ("DFS2 grid", "Zipped Shapefile"), or the extension when unknown, or ''. */
export function formatName(record) {
  if (isZippedShapefile(record)) return 'Zipped Shapefile';
  const format = formatOf(record);
  return FORMATS[format] || format;
}

/** The format's name with its extension, "DFS2 grid (.dfs2)", for details. */
export function formatLabel(record) {
  const format = formatOf(record);
  if (!format) return 'no extension';
  const name = formatName(record);
  return name === format ? format : `${name} (${format})`;
}

/** The dataset type in words ("Grid or mesh"). */
export function typeLabel(record) {
  const type = record?.datasetType;
  return TYPES[type] || type || 'File';
}
