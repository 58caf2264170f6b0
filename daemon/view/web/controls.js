// Controls, shown only when sonoflow-view says this user may change the daemon's settings (the
// daemon decides, on its control socket); every change goes through POST api/control.
export class Controls {
  constructor(doc, onReply) {
    this.doc = doc;
    this.onReply = onReply;
    this.section = doc.getElementById('controls');
    this.why = doc.getElementById('controls-why');
    this.select = doc.getElementById('material-select');
    this.materials = [];
    doc.getElementById('apply-fluid').addEventListener('click', async () => {
      await this.send(`material ${this.select.value}`);
      await this.send(`tau ${Number(doc.getElementById('tau').value)}`);
      await this.send(`alpha ${Number(doc.getElementById('alpha').value)}`);
    });
    this.select.addEventListener('change', () => this.send(`material ${this.select.value}`));
    for (const b of doc.querySelectorAll('.modes button')) b.addEventListener('click', () => this.send(`mode ${b.dataset.mode}`));
  }

  // Viewer info (api/viewer): show or hide, and say why; the material choices are the presets
  // the daemon's fluid loaded (its `materials` answer).
  setAccess(control) {
    const materials = control.materials ?? [];
    if (materials.join() !== this.materials.join()) {
      this.materials = materials;
      const current = this.select.value;
      this.select.replaceChildren(...materials.map((m) => new Option(m, m)));
      if (materials.includes(current)) this.select.value = current;
      this.synced = false;  // show the daemon's current material again
    }
    this.section.hidden = !control.may_write;
    this.why.textContent = control.may_write ? '' : `controls hidden: ${control.reason || 'the daemon cannot be reached'}`;
  }

  // The daemon's current settings (status), so the inputs start from them.
  setStatus(status) {
    if (this.synced) return;
    this.synced = true;
    const current = status.fluid.material.replaceAll('-', '_');  // preset files say '_'
    if (!this.materials.includes(current)) this.select.add(new Option(current, current));
    this.select.value = current;
    this.doc.getElementById('tau').value = status.fluid.tau_s;
    this.doc.getElementById('alpha').value = status.fluid.alpha;
  }

  setMode(mode) {
    for (const b of this.doc.querySelectorAll('.modes button')) b.classList.toggle('active', b.dataset.mode === mode);
  }

  async send(line) {
    const response = await fetch('api/control', { method: 'POST', body: line,
                                                   headers: { 'X-Sonoflow-View': '1', 'Content-Type': 'text/plain' } });
    const reply = await response.json();
    this.doc.getElementById('control-reply').textContent =
      reply.ok ? reply.message : `refused: ${reply.error?.message ?? 'unknown error'}`;
    this.onReply(line, reply);
    return reply;
  }
}
