// Preloaded (NODE_OPTIONS=--require) into an unmodified official CLI, whose ports are fixed (4800, 4802, 4810 for
// EI_HOST=localhost): its connections to those go to the test service's own ports on 127.0.0.1 (PORT_MAP="4800:p1,...").
const net = require('node:net');
const map = new Map((process.env.PORT_MAP || '').split(',').filter(Boolean).map((p) => p.split(':').map(Number)));
const original = net.Socket.prototype.connect;
const redirect = (o) => (o && typeof o === 'object' && map.has(Number(o.port)) ? { ...o, host: '127.0.0.1', port: map.get(Number(o.port)) } : o);
net.Socket.prototype.connect = function (...args) {
  // net.connect passes its normalized [options, callback] array, marked with a symbol: changed in place.
  if (Array.isArray(args[0])) args[0][0] = redirect(args[0][0]);
  else args[0] = redirect(args[0]);
  return original.apply(this, args);
};
