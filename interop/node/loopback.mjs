// Preloaded (node --import) into a peer server that listens on every
// interface (server-everything calls app.listen(PORT) with no host): binds
// every listen call to 127.0.0.1 instead, and prints the address it got on
// stderr as "mcpdiag-interop: listening http://127.0.0.1:PORT" so that
// PORT=0 works.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
	if (args.length > 0 && args[0] !== null && typeof args[0] === 'object' && !Array.isArray(args[0])) {
		// listen(options[, cb]): a path (unix socket) or fd is left alone.
		if (args[0].path === undefined && args[0].fd === undefined && args[0].handle === undefined) {
			args[0] = { ...args[0], host: '127.0.0.1' };
		}
	} else if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
		// listen(port[, host][, backlog][, cb]): replace or insert the host.
		if (typeof args[1] === 'string') {
			args[1] = '127.0.0.1';
		} else {
			args.splice(1, 0, '127.0.0.1');
		}
	}
	this.once('listening', () => {
		const a = this.address();
		if (a && typeof a === 'object') {
			process.stderr.write(`mcpdiag-interop: listening http://${a.address}:${a.port}\n`);
		}
	});
	return listen.apply(this, args);
};
