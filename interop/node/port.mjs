// Preloaded (node --import) into a peer that listens on a fixed port
// (the TypeScript SDK's ssePollingExample calls app.listen(3001)): a
// listen(port, …) call listens on MCPDIAG_LISTEN_PORT instead, so that
// PORT 0 gives a free one (loopback.mjs, preloaded after it, binds
// 127.0.0.1 and prints the port). Without the variable it changes nothing.
import net from 'node:net';

const port = process.env.MCPDIAG_LISTEN_PORT;
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
	if (port !== undefined && (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0])))) {
		args[0] = Number(port);
	}
	return listen.apply(this, args);
};
