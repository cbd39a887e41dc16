// Reading DFS files (dfs0, dfs1, dfs2, dfs3, dfsu) in the browser, from their raw bytes
// (GET /api/raw/dataset/{id} gives a signed same-origin URL): the header's items with their
// EUM units and value types, the time axis, and for dfs0 every value. Follows the byte layout
// described in docs/formats.md#the-container: a 130-byte preamble, then a stream of tagged blocks
// (0xFE u16 tag ... 0xFF) and typed records (u8 type, i32 count, values), little-endian.

/** EUM unit abbreviations by code (from crates/formats/src/dfs/eum_tables.rs). */
const UNIT_TABLE = "0:-|1000:m|1001:km|1002:mm|1003:ft|1004:in|1005:mi|1006:yd|1007:cm|1008:mu-m|1009:nmi|1010:mft|"
  + "1011:l/m^2|1012:mm D50|1013:in US|1014:ft US|1015:yd US|1016:mi US|1200:kg|1201:g|1202:mg|"
  + "1203:mu-g|1204:t|1205:kt|1206:Mt|1207:lb|1208:t US|1209:oz|1250:/kg|1251:/g|1252:/mg|1253:/mu-g|"
  + "1254:/t|1255:/kt|1256:/Mt|1257:/lb|1258:/t US|1259:/oz|1400:sec|1401:min|1402:h|1403:d|1404:yr|"
  + "1405:mth|1406:ms|1600:m^3|1601:l|1602:ml|1603:ft^3|1604:gal|1605:mgal|1606:km^3|1607:ac-ft|"
  + "1608:Mgal|1609:Ml|1610:10^6m^3|1611:m^3/$|1612:galUK|1613:MgalUK|1614:yd US^3|1615:yd^3|"
  + "1800:m^3/s|1801:ft^3/s|1802:Ml/d|1803:Mgal/d|1804:ac-ft/d|1805:m^3/yr|1806:gal/d/head|"
  + "1807:l/d/head|1808:m^3/s/head|1809:l/person/d|1810:m^3/d|1811:gal/s|1812:gal/d|1813:gal/yr|"
  + "1814:ft^3/d|1815:ft^3/yr|1816:m^3/min|1817:ft^3/min|1818:gal/min|1819:l/s|1820:l/min|1821:m^3/h|"
  + "1822:galUK/d|1823:MgalUK/d|1824:ft^3/PE/d|1825:m^3/PE/d|1826:galUK/s|1827:galUK/yr|"
  + "1828:galUK/PE/d|1829:yd US^3/s|1830:yd^3/s|1831:ft US^3/s|1832:ft US^3/min|1833:ft US^3/day|"
  + "1834:ft US^3/yr|1835:yd US^3/s|1836:l/d|2000:m/s|2001:mm/h|2002:ft/s|2003:l/s/km^2|2004:mm/d|"
  + "2005:ac-ft/s/ac|2006:m/d|2007:ft^3/s/mi^2|2008:m/h|2009:ft/d|2010:mm/mth|2011:in/s|2012:m/min|"
  + "2013:ft/min|2014:in/min|2015:ft/h|2016:in/h|2017:mm/s|2018:cm/h|2019:knot|2020:mi/h|2021:km/h|"
  + "2022:AFD/ac|2023:cm/s|2024:ft^3/ac/s|2025:m^3/ha/d|2026:m^3/ha/h|2027:m^3/ha/s|2028:gal/min/ac|"
  + "2029:l/min/ha|2030:l/s/ha|2031:mu-m/s|2032:MGD/ac|2033:IMGD/ac|2034:Ml/d/ha|2035:in US/s|"
  + "2036:ft US/s|2037:ft US/d|2038:in US/h|2039:in US/min|2040:mm/yr|2041:ft^3/ac/h|2042:ft^3/ac/d|"
  + "2043:l/h/ha|2044:l/d/ha|2100:m/s^2|2101:ft/s^2|2200:kg/m^3|2201:mu-g/m^3|2202:mg/m^3|2203:g/m^3|"
  + "2204:mu-g/l|2205:mg/l|2206:g/l|2207:lb/ft^3|2208:t/m^3|2209:lb/ft^2|2210:t/m^2|2211:mu-g/m^2|"
  + "2212:lb/yd US^3|2213:lb/yd^3|2214:lb/ft US^3|2215:lb/ft US^2|2216:oz/ft^3|2217:oz/ft US^3|"
  + "2218:oz/yd^3|2219:oz/yd US^3|2220:oz/ft^2|2221:oz/ft US^2|2300:kg/m/s|2301:Pa*s|2302:kg/m/d|"
  + "2303:g/m/d|2304:g/km/d|2305:lb/ft/d|2306:lb/ft US/d|2307:oz/ft/d|2308:oz/ft US/d|2309:kg/yd/s|"
  + "2310:kg/ft/s|2311:lb/yd/s|2312:lb/ft/s|2400:rad|2401:deg|2402:degN50|2403:deg^2|2404:rad^2|"
  + "2500:deg/m|2501:rad/m|2510:deg/s|2511:rad/s|2600:/d|2601:%/d|2602:Hz|2603:/h|2604:$/yr|2605:/s|"
  + "2606:10^9/d|2607:10^12/yr|2608:m^2/s/ha|2609:ft^2/s/ac|2610:rpm|2611:%/h|2612:%/min|2613:%/s|"
  + "2614:rev/s|2615:rev/h|2800:deg C|2801:deg F|2802:deg K|2850:/deg C|2851:/deg F|2900:deg C|"
  + "2901:deg F|3000:M/100 ml|3001:1/100 ml|3002:/l|3003:/m^3|3004:/ml|3005:/ft^3|3006:/gal|"
  + "3007:/mgal|3008:/km^3|3009:/ac-ft|3010:/Mgal|3011:/Ml|3012:/galUK|3013:/MgalUK|3014:/yd US^3|"
  + "3015:/yd^3|3100:s/m|3200:m^2|3201:m^3/m|3202:ac|3203:ft^2|3204:ha|3205:km^2|3206:mi^2|"
  + "3207:ft^3/ft|3208:ft US^2|3209:yd US^2|3210:mi US^2|3211:ac US|3212:yd US^3/yd US|3213:yd^3/yd|"
  + "3214:ft US^3/ft US|3215:l/m|3400:E/m^2/d|3401:1000/m^2/d|3402:/m^2/s|3600:m^(1/3)/s|"
  + "3601:ft^(1/3)/s|3800:s/m^(1/3)|3801:s/ft^(1/3)|4000:m^(1/2)/s|4001:ft^(1/2)/s|4002:ft US^(1/2)/s|"
  + "4200:kg/s|4201:mu-g/s|4202:mg/s|4203:g/s|4204:kg/h|4205:kg/d|4206:g/d|4207:kg/yr|4208:g/min|"
  + "4209:kg/PE/d|4210:kg/min|4212:lb/d|4213:lb/h|4214:lb/min|4215:lb/s|4216:lb/PE/d|4217:lb/yr|"
  + "4218:t/yr|4219:t/d|4220:t/s|4400:g/m^2|4401:kg/m|4402:kg/m^2|4403:kg/ha|4404:mg/m^2|4405:lb/ac|"
  + "4406:kg/km^2|4407:t/km^2|4408:g/km^2|4409:t/ha|4410:g/ha|4411:lb/mi^2|4412:kg/ac|4413:kg/ft^2|"
  + "4414:kg/mi^2|4415:t/ac|4416:t/ft^2|4417:t/mi^2|4418:g/ac|4419:g/ft^2|4420:g/mi^2|4421:lb/ha|"
  + "4422:lb/m^2|4423:lb/km^2|4424:mg/ha|4425:mg/km^2|4426:mg/ac|4427:mg/ft^2|4428:mg/mi^2|4429:lb/m|"
  + "4430:t/m|4431:lb/ft|4432:lb/yd|4433:lb/ft US|4434:lb/yd US|4435:oz/ft|4436:oz/yd|4437:oz/ft US|"
  + "4438:oz/yd US|4439:kg/yd|4440:kg/ft|4500:g/m^2/d|4501:g/m^2/s|4502:kg/ha/h|4503:kg/m^2/s|"
  + "4504:kg/ha/d|4505:lb/ac/d|4506:kg/m^2/d|4507:lb/ft^2/s|4600:g/m^3/h|4601:g/m^3/d|4602:g/m^3/s|"
  + "4603:mg/l/d|4700:m^3/s/m|4701:m^3/yr/m|4702:m^2/s|4704:ft^2/s|4706:m^3/s/10mm|4707:ft^3/s/in|"
  + "4708:m^2/h|4709:m^2/d|4710:ft^2/h|4711:ft^2/d|4712:galUK/d/ft|4713:gal/d/ft|4714:gal/min/ft|"
  + "4715:l/d/m|4716:l/min/m|4717:l/s/m|4718:ft^3/s/ft|4719:ft^3/h/ft|4720:ft^2/s^2|4721:cm^3/s/cm|"
  + "4722:mm^3/s/mm|4723:ft US^3/s/ft US|4724:in^3/s/in|4725:in US^3/s/in US|4726:yd US^3/s/yd US|"
  + "4727:yd^3/s/yd|4728:yd^3/yr/yd|4729:yd US^3/yr/yd US|4730:m^3/h/m|4731:m^3/d/m|4732:ft^3/d/ft|"
  + "4801:mm/d|4802:in/d|4803:m^3/km^2/d|4900:W|4901:kW|4902:MW|4903:GW|4904:hp|5000:/m|5001:%/100m|"
  + "5002:%/100ft|5003:/ft|5004:/in|5005:/ft US|5006:/in US|5100:m^3/s^2|5200:m^2*s/rad|5201:m^2/rad|"
  + "5202:m^2*s|5203:m^2/deg|5204:m^2*s^2/rad|5205:m^2/s/rad|5206:m^2*s/deg|5207:m^2*s^2/deg|"
  + "5208:m^2/s/deg|5209:ft^2/s/rad|5210:ft^2/s/deg|5211:ft^2*s^2/rad|5212:ft^2*s^2/deg|"
  + "5213:ft^2*s/rad|5214:ft^2*s/deg|5215:ft^2/rad|5216:ft^2/deg|5217:ft^2*s|5300:(mg/l)^(1/2)/d|"
  + "5301:(mg/l)^(1/2)/h|5400:N/m^2|5401:kN/m^2|5402:lb/ft/s^2|5500:N/m^3|5501:kN/m^3|5550:kg*m^2|"
  + "5551:lb*ft^2|5600:J|5601:kJ|5602:MJ|5603:GJ|5604:TJ|5605:kWh|5606:Ws|5607:PJ|5608:EJ|5609:MWh|"
  + "5610:GWh|5650:/J|5651:/kJ|5652:/MJ|5653:/GJ|5654:/TJ|5655:/PJ|5656:/EJ|5657:/kWh|5658:/Ws|"
  + "5659:/MWh|5660:/GWh|5700:kJ/m^2/h|5701:kJ/m^2/d|5702:MJ/m^2/d|5703:J/m^2/d|5710:mm/(kJ/m^2)|"
  + "5711:mm/(MJ/m^2)|5800:mm/deg C/d|5801:mm/deg C/h|5802:in/deg F/d|5803:in/deg F/h|5900:/deg C/d|"
  + "5901:/deg C/h|5902:/deg F/d|5903:/deg F/h|6000:deg C/100m|6001:deg C/100ft|6002:deg F/100m|"
  + "6003:deg F/100ft|6100:Pa|6101:hPa|6102:kPa|6103:psi|6104:MPa|6105:m|6106:ft|6107:bar|6108:mbar|"
  + "6109:mu-Pa|6110:dbar|6150:dB re 1 mu-Pa^2*s|6160:dB/lambda|6200:PSU|6300:PSU*m^3/s|"
  + "6301:deg C*m^3/s|6302:m^3/s|6303:PSU*ft^3/s|6304:deg F*ft^3/s|6400:m^2/s^2|6401:m^2/s^3|"
  + "6402:ft^2/s^3|6403:m^2/s^3/rad|6404:ft^2/s^3/rad|6500:J/kg|6600:W/m^2|6700:J*kg/deg K|"
  + "6800:m^3/s^2|6801:ft^3/s^2|6802:AFD/s|6803:IMGD/s|6804:MGD/s|6805:GPM/s|6806:m^3/d/s|"
  + "6807:m^3/h/s|6808:Ml/d/s|6809:l/min/s|6810:l/s^2|6900:m^3/g|6901:l/g|6902:m^3/mg|6903:m^3/mu-g|"
  + "7000:N|7001:kN|7002:MN|7003:mN|7050:kg*m|7060:kg*m^2|7070:kg*m/s|7080:kg*m^2/s|7100:m^2/Hz|"
  + "7101:m^2/Hz/deg|7102:m^2/Hz/rad|7103:ft^2/Hz|7104:ft^2/Hz/deg|7105:ft^2/Hz/rad|7200:m^2/Hz^2|"
  + "7201:m^2/Hz^2/deg|7202:m^2/Hz^2/rad|7500:l/s/m|7501:l/min/m|7502:Ml/d/m|7503:m^3/h/m|"
  + "7504:m^3/d/m|7505:ft^3/s/psi|7506:gal/min/psi|7507:Mgal/d/psi|7508:MgalUK/d/psi|7509:ac-ft/d/psi|"
  + "7510:m^3/h/bar|8100:kg/s^2|9100:m^2/kg|9200:/m/s|9201:m/s/ha|9202:ft/s/ac|9300:/m^2|9301:/ac|"
  + "9302:/ha|9303:/km^2|9350:/m^3|9351:/m^3|9352:/ft^3|9400:m^2/s|9401:ft^2/s|9600:/W|9700:N*m|"
  + "9701:kNm|9702:MNm|9703:Nmm|9800:N*m*s|9900:N/m/s|12000:mol|12001:mmol|12002:mu-mol|12003:nmol|"
  + "12020:mol/l|12021:mmol/l|12022:mu-mol/l|12023:nmol/l|12024:mol/m^3|12025:mmol/m^3|"
  + "12026:mu-mol/m^3|12040:mol/kg|12041:mmol/kg|12042:mu-mol/kg|12043:nmol/kg|12060:mol/m^2|"
  + "12061:mmol/m^2|12062:mu-mol/m^2|12063:nmol/m^2|99000:()|99001:%|99002:o/oo|99003:(h/d)|"
  + "99004:person|99005:g/g|99006:g/kg|99007:mg/g|99008:mg/kg|99009:mu-g/g|99010:kg/kg|99011:m^3/m^3|"
  + "99012:l/m^3|99013:Integer|99014:m/m|99015:/min|99016:/mth|99017:/yr|99018:ml/l|99019:mu-l/l|"
  + "99020:ppm|99021:g|99100:A|99101:mA|99102:mu-A|99103:kA|99104:MA|99150:V|99151:mV|99152:mu-V|"
  + "99153:kV|99154:MV|99180:ohm|99181:kOhm|99182:Mohm|99200:W/m|99201:kW/m|99202:MW/m|99203:GW/m|"
  + "99204:kW/ft|99220:W/m/deg C|99221:W/ft/deg F|99250:S|99251:mS|99252:mu-S|99260:S/m|99261:mS/cm|"
  + "99262:mu-S/cm|99263:kg/(m*s)|99264:cP|99265:lbf*s/ft^2|99266:lb/(s*ft)";

let units = null;
/** The abbreviation of an EUM unit code, written for people (m³/s, µm), or '' when unknown. */
export function unitLabel(code) {
  if (!units) {
    units = new Map(UNIT_TABLE.split('|').map((entry) => {
      const colon = entry.indexOf(':');
      return [Number(entry.slice(0, colon)), entry.slice(colon + 1)];
    }));
  }
  const raw = units.get(code);
  if (raw === undefined || raw === '-' || code === 0) return '';
  const superscripts = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
  return raw
    .replace(/\^(-?\d+)/g, (_, power) => [...power].map((c) => superscripts[c] || c).join(''))
    .replace(/\bmu-/g, 'µ')
    .replace(/^deg C$/, '°C')
    .replace(/^deg F$/, '°F');
}

const VALUE_TYPES = ['Instantaneous', 'Accumulated', 'Step accumulated', 'Mean step backward', 'Mean step forward'];
const DATA_TYPES = { 1: 'float', 2: 'double', 3: 'byte', 4: 'int32', 5: 'uint32', 6: 'int16', 7: 'uint16' };
const TYPE_SIZES = { 1: 4, 2: 8, 3: 1, 4: 4, 5: 4, 6: 2, 7: 2 };
const TIME_UNIT_SECONDS = { 1400: 1, 1401: 60, 1402: 3600, 1403: 86400 };

/** Thrown when the bytes end before what was asked for was read (a header longer than the
 *  range fetched). */
export class Truncated extends Error {}

class Reader {
  constructor(buffer) {
    this.view = new DataView(buffer);
    this.bytes = new Uint8Array(buffer);
    this.pos = 130;
  }

  need(n) {
    if (this.pos + n > this.view.byteLength) throw new Truncated('The file ends early.');
  }

  /** The next token: {open: tag} | {close: true} | {type, count, values} | null at the end. */
  next({ skipValues = false } = {}) {
    if (this.pos >= this.view.byteLength) return null;
    const kind = this.bytes[this.pos];
    if (kind === 0xfe) {
      this.need(3);
      const tag = this.view.getUint16(this.pos + 1, true);
      this.pos += 3;
      return { open: tag };
    }
    if (kind === 0xff) {
      this.pos += 1;
      return { close: true };
    }
    this.need(5);
    const count = this.view.getInt32(this.pos + 1, true);
    const size = TYPE_SIZES[kind];
    if (!size || count < 0) throw new Error(`Not a DFS record at byte ${this.pos}.`);
    const start = this.pos + 5;
    this.need(5 + count * size);
    this.pos = start + count * size;
    if (skipValues) return { type: kind, count, start };
    return { type: kind, count, start, values: this.values(kind, start, count) };
  }

  values(type, start, count) {
    if (type === 3) {
      const raw = this.bytes.subarray(start, start + count);
      return raw;
    }
    const out = new Array(count);
    const v = this.view;
    for (let i = 0; i < count; i += 1) {
      const at = start + i * TYPE_SIZES[type];
      out[i] = type === 1 ? v.getFloat32(at, true)
        : type === 2 ? v.getFloat64(at, true)
          : type === 4 ? v.getInt32(at, true)
            : type === 5 ? v.getUint32(at, true)
              : type === 6 ? v.getInt16(at, true)
                : v.getUint16(at, true);
    }
    return out;
  }
}

function text(record) {
  if (!record || record.type !== 3) return '';
  let end = record.values.length;
  if (end && record.values[end - 1] === 0) end -= 1;
  return new TextDecoder('windows-1252').decode(record.values.subarray(0, end));
}

/** Reads one block's records up to its close (nested blocks are read and dropped). */
function blockRecords(reader) {
  const records = [];
  let depth = 0;
  for (;;) {
    const token = reader.next();
    if (!token) throw new Truncated('The file ends inside a block.');
    if (token.open !== undefined) depth += 1;
    else if (token.close) {
      if (depth === 0) return records;
      depth -= 1;
    } else if (depth === 0) records.push(token);
  }
}

function isDfs(buffer) {
  const head = new TextDecoder('ascii').decode(new Uint8Array(buffer, 0, Math.min(8, buffer.byteLength)));
  return head === 'DHI_DFS_';
}

/**
 * The header of a DFS file: {title, application, projection, deleteFloat, deleteDouble,
 * time: {calendar, start (Date|null), unitSeconds, offset, step|span, count, equidistant},
 * items: [{name, eumType, eumUnit, unit, dataType, valueType}], customBlocks}. With
 * `values` (dfs0), also `times` (ms since the epoch for calendar axes, else seconds from the
 * start) and per item `values` (Float64Array, NaN where the file has a delete value).
 * Stops after the items when `values` is false, so a prefix of the file is enough; throws
 * Truncated when it is not.
 */
export function readDfs(buffer, { values = false } = {}) {
  if (!isDfs(buffer)) throw new Error('This is not a DFS file (no DHI_DFS_ preamble).');
  const reader = new Reader(buffer);
  const header = { title: '', application: '', projection: null, deleteFloat: -1e-35, deleteDouble: -1e-255, time: null, items: [], customBlocks: {} };
  let item = null;
  for (;;) {
    const token = reader.next();
    if (!token) break;
    if (token.close || token.type) continue;
    const tag = token.open;
    if (tag === 40000 || tag === 50000) {
      if (!values) return header;
      if (tag === 50000) {
        blockRecords(reader);
        readSteps(reader, header);
        return header;
      }
      // Static items (rare in dfs0): skip their blocks until the data section.
      continue;
    }
    if (tag === 10000 || tag === 20000 || tag === 30000) {
      blockRecords(reader);
      continue;
    }
    const records = blockRecords(reader);
    if (tag === 10001) header.title = text(records[0]);
    else if (tag === 10002) header.application = text(records[0]);
    else if (tag === 10006 && records[0]) header.deleteFloat = records[0].values[0];
    else if (tag === 10007 && records[0]) header.deleteDouble = records[0].values[0];
    else if (tag === 10011) {
      const origin = records[1]?.values || [];
      header.projection = { name: text(records[0]), longitude: origin[0], latitude: origin[1], orientation: origin[2] };
    } else if (tag >= 20051 && tag <= 20054) {
      const calendar = tag >= 20053;
      const rest = calendar ? records.slice(2) : records;
      const unit = rest[0]?.values[0];
      const [offset, stepOrSpan] = rest[1]?.values || [0, 0];
      const [count] = rest[2]?.values || [0];
      let start = null;
      if (calendar) {
        const date = text(records[0]);
        const clock = text(records[1]);
        const parsed = new Date(`${date}T${clock}Z`);
        start = Number.isNaN(parsed.getTime()) ? null : parsed;
      }
      const equidistant = tag === 20051 || tag === 20053;
      header.time = {
        calendar, start, unit, unitSeconds: TIME_UNIT_SECONDS[unit] ?? 1, offset, count, equidistant,
        step: equidistant ? stepOrSpan : null, span: equidistant ? null : stepOrSpan,
      };
    } else if (tag === 30001) {
      // number of items; the item blocks follow
    } else if (tag === 30005) {
      // Inside the static section (after 40000) items are static; with values=false we
      // returned before reaching it.
      item = {
        eumType: records[0]?.values[0],
        name: text(records[1]),
        eumUnit: records[2]?.values[0],
        dataType: DATA_TYPES[records[3]?.values[0]] || String(records[3]?.values[0]),
        dataTypeCode: records[3]?.values[0],
        valueType: VALUE_TYPES[0],
      };
      item.unit = unitLabel(item.eumUnit);
      header.items.push(item);
    } else if (tag === 30006 && item) {
      item.valueType = VALUE_TYPES[records[0]?.values[0]] || VALUE_TYPES[0];
    } else if (tag === 60000) {
      header.customBlocks[text(records[0])] = records[1]?.values;
    } else if (tag === 40001) {
      // a static item's data: the item read before it is static, not dynamic
      if (item) header.items.pop();
      item = null;
    }
  }
  return header;
}

function readSteps(reader, header) {
  const n = header.items.length;
  const time = header.time || { count: 0, equidistant: true, offset: 0, step: 1, unitSeconds: 1, calendar: false };
  const steps = time.count;
  const columns = header.items.map(() => new Float64Array(steps));
  const seconds = new Float64Array(steps);
  const deleteFloat = Math.fround(header.deleteFloat);
  const deleteDouble = header.deleteDouble;
  let k = 0;
  while (k < steps) {
    const open = reader.next();
    if (!open) break;
    if (open.open !== 50001) throw new Error(`Unexpected block ${open.open ?? '?'} in the data at step ${k}.`);
    let t = time.offset + k * (time.step || 0);
    for (;;) {
      const token = reader.next();
      if (!token) throw new Truncated('The file ends inside a time step.');
      if (token.close) break;
      if (token.values && token.type === 2) t = token.values[0];
    }
    seconds[k] = t * time.unitSeconds;
    for (let i = 0; i < n; i += 1) {
      const record = reader.next();
      if (!record || record.open !== undefined || record.close) throw new Truncated(`Step ${k} is incomplete.`);
      let value = record.values[0];
      if (record.type === 1) {
        if (value === deleteFloat) value = NaN;
      } else if (record.type === 2) {
        if (value === deleteDouble || Math.fround(value) === deleteFloat) value = NaN;
      }
      columns[i][k] = Number.isFinite(value) ? value : NaN;
    }
    k += 1;
  }
  const count = k;
  header.times = time.calendar && time.start
    ? Float64Array.from(seconds.subarray(0, count), (s) => Math.round(time.start.getTime() + s * 1000))
    : seconds.slice(0, count);
  header.items.forEach((one, i) => { one.values = columns[i].slice(0, count); });
  header.stepCount = count;
}

/** Whether a dataset's format is a DFS file whose header this module reads. */
export function isDfsFormat(format) {
  return ['.dfs0', '.dfs1', '.dfs2', '.dfs3', '.dfsu'].includes(String(format || '').toLowerCase());
}
