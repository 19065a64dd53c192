import numpy as np, math
from scipy.optimize import minimize
from erahbo.gp.kernels import kernel
from erahbo.gp.variance_exact import mode_pseudo, one_pseudo
from erahbo.gp.exact import ExactGP
rng = np.random.default_rng(0)
n = 12
X = rng.random((n, 2)); ls = np.array([0.3, 0.5])
K = kernel(X, X, ls, "matern52")
k = rng.integers(1, 6, n).astype(float); k[0] = 2
s2 = rng.gamma(1.0, 1.0, n); s2[0] = 0.0; s2[k < 2] = 0.7
mv, sv, floor = -0.3, 1.0, 1e-5
from erahbo.gp.variance_noise import log_observations, variance_noise
y = (log_observations(s2, k, floor) - mv) / sv
tv = variance_noise(4.93, k, False, True)
yp = mode_pseudo(K, y, tv, s2, k, mv, sv, floor)
gp = ExactGP(X, yp, tv, ls, "matern52"); mu, _ = gp.predict(X)
# direct optimization of the posterior
gam = k >= 2; a = 0.5*(k-1); b = 0.5*(k-1)*np.maximum(s2, floor)
Ki = np.linalg.inv(K + 1e-10*np.eye(n))
def negpsi(z):
    g = mv + sv*z
    ll = np.where(gam, -a*g - b*np.exp(-g), -0.5*(y-z)**2/tv)
    return -(ll.sum() - 0.5*z@Ki@z)
r = minimize(negpsi, np.zeros(n), method="BFGS", options={"gtol":1e-10})
print("mode vs BFGS", np.abs(mu - r.x).max())
# one_pseudo: leave row 3 out
i = 3 if k[3] >= 2 else int(np.flatnonzero(gam)[1])
keep = np.arange(n) != i
mo, vo = ExactGP(X[keep], yp[keep], tv[keep], ls, "matern52").predict(X[i:i+1])
yi = one_pseudo(float(mo[0]), float(vo[0]), s2[i], k[i], tv[i], mv, sv, floor)
print("row", i, "pseudo", yp[i], "1-D", yi)
print("row0 (s2=0,k=2): proxy y", y[0], "pseudo", yp[0], "mode", mu[0])
from erahbo.gp.variance_exact import ep_pseudo, ep_one, tilted_moments
# tilted moments vs brute-force grid
m, v, a_, b_ = 0.3, 0.8, 0.5, 0.5*np.array([1e-6, 0.2, 3.0, 40.0])
for bb in b_:
    zg = np.linspace(-15, 15, 300001); lg = -(zg-m)**2/(2*v) - a_*(mv+sv*zg) - bb*np.exp(-(mv+sv*zg))
    w = np.exp(lg - lg.max()); w/=w.sum(); mg = (w*zg).sum(); vg = (w*(zg-mg)**2).sum()
    mt, vt = tilted_moments(np.array([m]), np.array([v]), np.array([a_]), np.array([bb]), mv, sv)
    print("tilted b=%g: quad %.8f %.8f grid %.8f %.8f" % (bb, mt[0], vt[0], mg, vg))
# ep vs flat-ish prior: single point large amplitude
import time
t=time.time(); ye = ep_pseudo(K, y, tv, s2, k, mv, sv, floor); print("ep time", time.time()-t)
gp = ExactGP(X, ye, tv, ls, "matern52"); mue, _ = gp.predict(X)
mo, vo = ExactGP(X[keep], ye[keep], tv[keep], ls, "matern52").predict(X[i:i+1])
print("EP row", i, ye[i], "1-D", ep_one(float(mo[0]), float(vo[0]), s2[i], k[i], tv[i], mv, sv, floor))
print("proxy mean", ExactGP(X, y, tv, ls, "matern52").predict(X)[0][:6])
print("EP mean   ", mue[:6]); print("Lap mode  ", mu[:6]); print("k", k[:6], "s2", s2[:6])
