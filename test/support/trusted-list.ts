import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * ETSI TS 119 612 trusted lists for tests, signed by xmlsec1 (an independent XML-DSig
 * implementation, Debian's xmlsec1): the shape of the EU lists (LOTL with pointers, national lists
 * with providers and services, enveloped signature over the whole list), with only what a reader of
 * trust anchors needs.
 */
const pemBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '');

export interface ServiceEntry {
  provider: string;
  name: string;
  certPem: string;
  type?: string;
  /** Newest first: the current status, then its history. */
  statuses: Array<{ status: 'granted' | 'withdrawn'; since: string }>;
}

const SIGNATURE_TEMPLATE = `<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="tl-signature">
<ds:SignedInfo>
<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>
<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>
<ds:Reference URI="">
<ds:Transforms>
<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>
<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>
</ds:Transforms>
<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>
<ds:DigestValue/>
</ds:Reference>
</ds:SignedInfo>
<ds:SignatureValue/>
<ds:KeyInfo><ds:X509Data><ds:X509Certificate/></ds:X509Data></ds:KeyInfo>
</ds:Signature>`;

function schemeInformation(territory: string, type: string, extra = ''): string {
  return `<SchemeInformation>
<TSLVersionIdentifier>5</TSLVersionIdentifier>
<TSLSequenceNumber>1</TSLSequenceNumber>
<TSLType>http://uri.etsi.org/TrstSvc/TrustedList/TSLType/${type}</TSLType>
<SchemeOperatorName><Name xml:lang="en">Test supervisory body ${territory}</Name></SchemeOperatorName>
<SchemeTerritory>${territory}</SchemeTerritory>
${extra}
<ListIssueDateTime>2026-01-01T00:00:00Z</ListIssueDateTime>
<NextUpdate><dateTime>2030-01-01T00:00:00Z</dateTime></NextUpdate>
</SchemeInformation>`;
}

const wrap = (inner: string) => `<?xml version="1.0" encoding="UTF-8"?>
<TrustServiceStatusList xmlns="http://uri.etsi.org/02231/v2#" Id="tsl" TSLTag="http://uri.etsi.org/19612/TSLTag">
${inner}
${SIGNATURE_TEMPLATE}
</TrustServiceStatusList>
`;

const serviceInfo = (element: string, entry: ServiceEntry, status: { status: string; since: string }) => `<${element}>
<ServiceTypeIdentifier>${entry.type ?? 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC'}</ServiceTypeIdentifier>
<ServiceName><Name xml:lang="en">${entry.name}</Name></ServiceName>
<ServiceDigitalIdentity><DigitalId><X509Certificate>${pemBody(entry.certPem)}</X509Certificate></DigitalId></ServiceDigitalIdentity>
<ServiceStatus>http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/${status.status}</ServiceStatus>
<StatusStartingTime>${status.since}</StatusStartingTime>
</${element}>`;

export function nationalListXml(territory: string, services: ServiceEntry[]): string {
  const providers = [...new Set(services.map((s) => s.provider))].map((provider) => `<TrustServiceProvider>
<TSPInformation><TSPName><Name xml:lang="en">${provider}</Name></TSPName></TSPInformation>
<TSPServices>
${services.filter((s) => s.provider === provider).map((s) => `<TSPService>
${serviceInfo('ServiceInformation', s, s.statuses[0]!)}
${s.statuses.length > 1 ? `<ServiceHistory>${s.statuses.slice(1).map((st) => serviceInfo('ServiceHistoryInstance', s, st)).join('\n')}</ServiceHistory>` : ''}
</TSPService>`).join('\n')}
</TSPServices>
</TrustServiceProvider>`).join('\n');
  return wrap(`${schemeInformation(territory, 'EUgeneric')}
<TrustServiceProviderList>
${providers}
</TrustServiceProviderList>`);
}

export function lotlXml(pointers: Array<{ territory: string; signerPem: string; location: string }>): string {
  const others = pointers.map((p) => `<OtherTSLPointer>
<ServiceDigitalIdentities><ServiceDigitalIdentity><DigitalId><X509Certificate>${pemBody(p.signerPem)}</X509Certificate></DigitalId></ServiceDigitalIdentity></ServiceDigitalIdentities>
<TSLLocation>${p.location}</TSLLocation>
<AdditionalInformation>
<OtherInformation><TSLType>http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric</TSLType></OtherInformation>
<OtherInformation><SchemeTerritory>${p.territory}</SchemeTerritory></OtherInformation>
<OtherInformation><MimeType xmlns="http://uri.etsi.org/02231/v2/additionaltypes#">application/vnd.etsi.tsl+xml</MimeType></OtherInformation>
</AdditionalInformation>
</OtherTSLPointer>`).join('\n');
  return wrap(schemeInformation('EU', 'EUlistofthelists', `<PointersToOtherTSL>\n${others}\n</PointersToOtherTSL>`));
}

/** Signs a list template with xmlsec1 (key and certificate PEM files); returns the signed XML. */
export function signWithXmlsec(dir: string, xml: string, keyFile: string, certFile: string): string {
  const name = `tl-${process.hrtime.bigint()}`;
  writeFileSync(path.join(dir, `${name}.tmpl.xml`), xml);
  execFileSync('xmlsec1', ['--sign', '--privkey-pem', `${keyFile},${certFile}`, '--output', `${name}.xml`, `${name}.tmpl.xml`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  return readFileSync(path.join(dir, `${name}.xml`), 'utf8');
}

/** xmlsec1's own verdict on a signed list, with the certificate it must be signed by. */
export function xmlsecVerifies(dir: string, xml: string, certFile: string): boolean {
  const file = path.join(dir, `check-${process.hrtime.bigint()}.xml`);
  writeFileSync(file, xml);
  try {
    execFileSync('xmlsec1', ['--verify', '--pubkey-cert-pem', certFile, '--enabled-key-data', 'rsa', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    return true;
  } catch {
    return false;
  }
}
