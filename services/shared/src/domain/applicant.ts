// The applicant of a submission (API.md "Resources the seed leaves open" and "Products and their
// requirements"): a legal name, and optionally a US FEIN and an address. One shape for the gateway,
// the worker and the submission service; gRPC carries absent strings as '' and absent messages as
// null, the API and the stored JSON leave absent fields out.

export interface Address {
  line1: string;
  line2?: string;
  city: string;
  region: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
}

export interface Applicant {
  legalName: string;
  /** US FEIN, 9 digits. */
  taxId?: string;
  address?: Address;
}

/** A FEIN as the API accepts it: `NN-NNNNNNN` or 9 digits. */
export const TAX_ID_PATTERN = '^([0-9]{2}-[0-9]{7}|[0-9]{9})$';

/** A FEIN as stored and returned: its 9 digits. */
export const normalizeTaxId = (taxId: string): string => taxId.replace(/-/g, '');

/** The applicant of a validated create body, as stored: the FEIN as 9 digits, absent parts left out. */
export function normalizeApplicant(a: Applicant): Applicant {
  const out: Applicant = { legalName: a.legalName };
  if (a.taxId !== undefined) out.taxId = normalizeTaxId(a.taxId);
  if (a.address) out.address = addressOf(a.address);
  return out;
}

function addressOf(a: Address): Address {
  const out: Address = { line1: a.line1, city: a.city, region: a.region, postalCode: a.postalCode, country: a.country };
  if (a.line2) out.line2 = a.line2;
  return out;
}

/** The gRPC form (proto3: '' for an absent string, null for an absent message). */
export interface ApplicantMessage {
  legalName?: string;
  taxId?: string;
  address?: { line1?: string; line2?: string; city?: string; region?: string; postalCode?: string; country?: string } | null;
}

export function applicantToMessage(a: Applicant): Required<ApplicantMessage> {
  return {
    legalName: a.legalName,
    taxId: a.taxId ?? '',
    address: a.address ? { ...a.address, line2: a.address.line2 ?? '' } : null,
  };
}

export function applicantFromMessage(m: ApplicantMessage | null | undefined): Applicant {
  const out: Applicant = { legalName: m?.legalName ?? '' };
  if (m?.taxId) out.taxId = m.taxId;
  const a = m?.address;
  if (a) {
    out.address = addressOf({
      line1: a.line1 ?? '',
      line2: a.line2 || undefined,
      city: a.city ?? '',
      region: a.region ?? '',
      postalCode: a.postalCode ?? '',
      country: a.country ?? '',
    });
  }
  return out;
}

/** ISO 3166-1 alpha-2: the 249 officially assigned codes. */
export const COUNTRY_CODES: readonly string[] = `
  AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE
  BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD
  CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM
  DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF
  GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU
  ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN
  KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME
  MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA
  NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM
  PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI
  SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK
  TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI
  VN VU WF WS YE YT ZA ZM ZW
`.trim().split(/\s+/);
