"""Where the flows go: per client and router on the client side, per server and router on the
storage side, for the uniform workload or an explicit one, with some routers down.

* Uniform workload: every client takes an equal share of every OST's stream, so a server with
  k OSTs offers k flows in all, 1/N of them to each of the N clients.  MDS carry no bulk flows
  (``weight_by="servers"`` instead counts every server, MDS included, as one flow).
* Explicit workloads (``Workload``, e.g. from ``lnetgen.place``) list client/server pairs with
  their flows.
* Writes: a client's traffic to a storage net is spread evenly over its gateways at the best
  live priority (priority 0 unless routers failed) -- LNet round-robins over the routes of one
  priority.  The flow then goes client -> router on the torus and router -> server on the
  storage fabric.
* Reads: a server's traffic to a client net is spread evenly over the *server's* gateways at the
  best live priority (bulk reads are sent by the server, so its own route table picks the
  router), then router -> client on the torus.  For round-robin and nearest-neighbor the
  servers route back through every router of the set, so reads do not follow the client's
  chosen router.
* Servers cut off (a failed leaf module or switch, ``lnetgen.traffic.routes.carriers``): a
  server's flows go to its failover partner when the partner is up, and are lost otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnetgen.traffic.index import PlanIndex
from lnetgen.traffic.routes import shares
from lnetgen.traffic.rows import evaluate
from lnetgen.traffic.settings import BoolArray, FloatArray, IntArray, Workload


@dataclass(frozen=True, eq=False)
class Traffic:
    """Per-row flows: writes client -> router, reads router -> client.

    ``w_client[i]`` gets ``w_matrix[w_key[i], r]`` flows to router r (likewise reads)."""

    w_client: IntArray
    w_key: IntArray
    w_matrix: FloatArray
    r_client: IntArray
    r_key: IntArray
    r_matrix: FloatArray
    w_server: FloatArray  # (S, R) writes: flows to server s through router r
    v_server: FloatArray  # (S, R) reads: flows from server s through router r
    served_w: float
    served_r: float
    lost_w: float
    lost_r: float


def _dense(owner: IntArray, col: IntArray, w: FloatArray, nrows: int, ncols: int) -> FloatArray:
    """An (nrows, ncols) matrix of the weights ``w`` summed at (``owner``, ``col``)."""
    flat = np.bincount(owner * ncols + col, weights=w, minlength=nrows * ncols)
    return np.asarray(flat, dtype=np.float64).reshape(nrows, ncols)


def traffic(
    ix: PlanIndex, mask: BoolArray, workload: Workload | None, carrier: IntArray | None = None
) -> Traffic:
    """Where the flows of ``workload`` (None: uniform) go with the routers in ``mask`` down;
    ``carrier``: per server, the server that carries its targets, -1 when none does
    (``lnetgen.traffic.routes.carriers``; None: every server up)."""
    R = len(ix.routers)
    nnet, ncnet = len(ix.nets), len(ix.client_nets)
    C, S = len(ix.classes), len(ix.servers)
    client, server = ix.sides()
    cst = evaluate(client.rows, client.nkeys, mask)
    csh = shares(client, cst)
    ssh = shares(server, evaluate(server.rows, server.nkeys, mask))
    # server s -> client net k: router shares (none when the server has no route table)
    sg = ix.server_group
    skeys = (np.maximum(sg, 0)[:, None] * ncnet + np.arange(ncnet)[None, :]).reshape(-1)
    owner, row = ssh.rows_of(skeys)
    keep = (sg >= 0)[owner // max(ncnet, 1)]
    srv_share = _dense(owner[keep], ssh.router[row[keep]], ssh.share[row[keep]], S * ncnet, R)
    srv_share = srv_share.reshape(S, ncnet, R)
    n = len(ix.site.clients)
    c_cls, c_net = np.divmod(csh.key, max(nnet, 1))
    carrier = np.arange(S, dtype=np.int64) if carrier is None else carrier
    alive = carrier >= 0
    if workload is None:
        # the flows each server offers, its targets' moved to the partner that carries them
        sf = np.bincount(carrier[alive], weights=ix.server_flows[alive], minlength=S)
        gone = float(ix.server_flows[~alive].sum())
        nf = np.bincount(ix.server_net, weights=sf, minlength=nnet).astype(np.float64)
        w_matrix = _dense(c_cls, csh.router, csh.share * nf[c_net], C, R) / max(n, 1)
        r_matrix = np.einsum("skr,s->kr", srv_share, sf) / max(n, 1)
        w_client = np.nonzero(ix.client_class >= 0)[0].astype(np.int64)
        w_key = ix.client_class[w_client]
        r_client = np.nonzero(ix.client_cnet >= 0)[0].astype(np.int64)
        r_key = ix.client_cnet[r_client]
        members = np.bincount(ix.client_class[ix.client_class >= 0], minlength=C)
        class_frac = members / max(n, 1)
        # per unit of a net's flows, the part each router carries
        u_net = _dense(c_net, csh.router, csh.share * class_frac[c_cls], nnet, R)
        w_server = u_net[ix.server_net] * sf[:, None]
        cnet_frac = np.bincount(ix.client_cnet[ix.client_cnet >= 0], minlength=ncnet) / max(n, 1)
        v_server = np.einsum("skr,k,s->sr", srv_share, cnet_frac, sf)
        # what is lost: the share of pairs with no live gateway, and the lost servers' flows
        has_w = (cst.live_n > 0).reshape(C, nnet)
        lost_w = float((class_frac[:, None] * nf[None, :] * ~has_w).sum())
        lost_w += float(class_frac.sum()) * gone
        has_r = srv_share.sum(axis=2) > 0  # (S, ncnet)
        lost_r = float((cnet_frac[None, :] * sf[:, None] * ~has_r).sum())
        lost_r += float(cnet_frac.sum()) * gone
    else:
        named = np.asarray([ix.server_id(s) for s in workload.servers], dtype=np.int64)
        up = carrier[named] >= 0 if len(named) else np.zeros(0, dtype=bool)
        sidx = np.maximum(carrier[named], 0) if len(named) else named
        cl = np.asarray(workload.clients, dtype=np.int64)
        fl = np.asarray(workload.flows, dtype=np.float64)
        P = len(cl)
        cls = ix.client_class[cl]
        kn = ix.client_cnet[cl]
        net = ix.server_net[sidx]
        owner, row = csh.rows_of(np.maximum(cls, 0) * nnet + net)
        keep = (cls[owner] >= 0) & up[owner]
        owner, row = owner[keep], row[keep]
        w_matrix = _dense(owner, csh.router[row], csh.share[row] * fl[owner], P, R)
        rrow = np.where(((kn >= 0) & up)[:, None], srv_share[sidx, np.maximum(kn, 0)], 0.0)
        r_matrix = rrow * fl[:, None]
        w_client = r_client = cl
        w_key = r_key = np.arange(P, dtype=np.int64)
        w_server = np.zeros((S, R))
        np.add.at(w_server, sidx, w_matrix)
        v_server = np.zeros((S, R))
        np.add.at(v_server, sidx, r_matrix)
        served = np.bincount(owner, minlength=P) > 0
        lost_w = float(fl[~served].sum())
        lost_r = float(fl[rrow.sum(axis=1) == 0].sum())
    served_w = float(w_matrix[w_key].sum()) if len(w_key) else 0.0
    served_r = float(r_matrix[r_key].sum()) if len(r_key) else 0.0
    return Traffic(
        w_client,
        w_key,
        w_matrix,
        r_client,
        r_key,
        r_matrix,
        w_server,
        v_server,
        served_w,
        served_r,
        lost_w,
        lost_r,
    )
