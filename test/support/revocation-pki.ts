import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * Revocation services for a test PKI made with openssl (not our code), on loopback: an `openssl ca`
 * database for the root in `dir` (root.pem/root.key), an `openssl ocsp` responder with a delegated
 * responder certificate, and the CRL served over HTTP. Leaves name them in AIA and CDP.
 */
export interface RevocationPki {
  ocspUrl: string;
  crlUrl: string;
  /** A URL where nothing answers (a responder that is down). */
  deadUrl: string;
  /** Issues a leaf and returns its PKCS#12 (passphrase "pw"); `pointers` decides which services it names. */
  issueLeaf(name: string, pointers: { ocsp?: boolean; crl?: boolean; deadOcsp?: boolean; days?: number; timeStamping?: boolean }): Buffer;
  /** Revokes a leaf now (keyCompromise), regenerates the CRL and restarts the responder on the new database. */
  revoke(name: string): Promise<void>;
  /** The DER OCSP response the responder gives for a leaf (for unit checks of the reader). */
  ocspResponseFor(name: string): Buffer;
  crlDer(): Buffer;
  close(): Promise<void>;
}

const run = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startRevocationPki(dir: string): Promise<RevocationPki> {
  writeFileSync(path.join(dir, 'index.txt'), '');
  writeFileSync(path.join(dir, 'crlnumber'), '1000\n');
  writeFileSync(path.join(dir, 'ca.cnf'), [
    '[ ca ]', 'default_ca = test_ca', '[ test_ca ]', `dir = ${dir}`, 'database = $dir/index.txt', 'new_certs_dir = $dir',
    'certificate = $dir/root.pem', 'private_key = $dir/root.key', 'serial = $dir/caserial', 'crlnumber = $dir/crlnumber',
    'default_md = sha256', 'default_days = 30', 'default_crl_days = 1', 'policy = any', 'unique_subject = no', 'copy_extensions = copy',
    '[ any ]', 'commonName = supplied', 'organizationName = optional', '',
  ].join('\n'));
  writeFileSync(path.join(dir, 'caserial'), '5000\n');
  const ocspPort = await freePort();
  const deadPort = await freePort();
  const crlServer = http.createServer((_req, res) => {
    const crl = path.join(dir, 'ca.crl.der');
    if (!existsSync(crl)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(readFileSync(crl));
  });
  await new Promise<void>((resolve) => crlServer.listen(0, '127.0.0.1', resolve));
  const crlUrl = `http://127.0.0.1:${(crlServer.address() as AddressInfo).port}/ca.crl`;
  const ocspUrl = `http://127.0.0.1:${ocspPort}`;
  const deadUrl = `http://127.0.0.1:${deadPort}`;

  const issue = (name: string, extensions: string, days = 30) => {
    run(dir, ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-subj', `/CN=docproc revocation ${name}/O=docproc tests`, '-out', `${name}.csr`]);
    writeFileSync(path.join(dir, `${name}.ext`), extensions);
    run(dir, ['ca', '-batch', '-config', 'ca.cnf', '-in', `${name}.csr`, '-extfile', `${name}.ext`, '-out', `${name}.pem`, '-notext', '-days', String(days)]);
  };
  issue('ocsp-responder', 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,OCSPSigning\nnoCheck=ignored\n');

  const gencrl = () => {
    run(dir, ['ca', '-config', 'ca.cnf', '-gencrl', '-out', 'ca.crl.pem']);
    run(dir, ['crl', '-in', 'ca.crl.pem', '-outform', 'DER', '-out', 'ca.crl.der']);
  };
  gencrl();

  let responder: ChildProcess | undefined;
  const startResponder = async () => {
    const child = spawn('openssl', ['ocsp', '-index', 'index.txt', '-port', String(ocspPort), '-rsigner', 'ocsp-responder.pem', '-rkey', 'ocsp-responder.key', '-CA', 'root.pem', '-nmin', '10'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    responder = child;
    // The responder serves one connection at a time; probing the port would tie it up, so wait for its own word.
    await new Promise<void>((resolve, reject) => {
      let said = '';
      const timer = setTimeout(() => reject(new Error(`the OCSP responder did not start: ${said}`)), 10_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (/waiting for OCSP client connections/i.test(said)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', () => reject(new Error(`the OCSP responder exited: ${said}`)));
    });
  };
  const stopResponder = async () => {
    if (!responder || responder.exitCode !== null) return;
    const exited = new Promise((resolve) => responder!.once('exit', resolve));
    responder.kill('SIGKILL');
    await exited;
  };
  await startResponder();

  return {
    ocspUrl,
    crlUrl,
    deadUrl,
    issueLeaf(name, pointers) {
      const aia = pointers.ocsp ? `OCSP;URI:${ocspUrl}` : pointers.deadOcsp ? `OCSP;URI:${deadUrl}` : '';
      issue(name, [
        'basicConstraints=critical,CA:FALSE',
        ...(pointers.timeStamping ? ['keyUsage=critical,digitalSignature', 'extendedKeyUsage=critical,timeStamping'] : ['keyUsage=critical,digitalSignature,nonRepudiation']),
        ...(aia ? [`authorityInfoAccess=${aia}`] : []), ...(pointers.crl ? [`crlDistributionPoints=URI:${crlUrl}`] : []), '',
      ].join('\n'), pointers.days);
      run(dir, ['pkcs12', '-export', '-in', `${name}.pem`, '-inkey', `${name}.key`, '-certfile', 'root.pem', '-passout', 'pass:pw', '-out', `${name}.p12`]);
      return readFileSync(path.join(dir, `${name}.p12`));
    },
    async revoke(name) {
      run(dir, ['ca', '-config', 'ca.cnf', '-revoke', `${name}.pem`, '-crl_reason', 'keyCompromise']);
      gencrl();
      await stopResponder();
      await startResponder();
    },
    ocspResponseFor(name) {
      run(dir, ['ocsp', '-issuer', 'root.pem', '-cert', `${name}.pem`, '-url', ocspUrl, '-respout', `${name}.ocsp`, '-noverify']);
      return readFileSync(path.join(dir, `${name}.ocsp`));
    },
    crlDer: () => readFileSync(path.join(dir, 'ca.crl.der')),
    async close() {
      await stopResponder();
      await new Promise((resolve) => crlServer.close(resolve));
    },
  };
}
