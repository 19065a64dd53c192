"""Tune Stable-Baselines3 PPO on CartPole with ERAHBO inside Optuna.

    pip install "erahbo[optuna]" stable-baselines3 gymnasium
    python examples/sb3_ppo_cartpole.py --trials 12 --timesteps 10000 --k-max 5

On 2 CPU cores that is a few dozen PPO runs of 10,000 steps, each some 10 s with one torch
thread (an estimate from SB3's usual ~1,000 CPU steps/s for a small MLP; not measured
with this script), so about 5-15 minutes in all. The defaults (``--trials 30 --timesteps
30000 --k-max 10``) are a real tuning run: hours on 2 cores. The script runs torch with one
thread (``OMP_NUM_THREADS=1``, set before torch is imported): with more threads than cores,
small networks train many times slower.

One Optuna trial is one PPO configuration. The objective trains it seed after seed (each seed
a fresh PPO run), reports each seed's final mean return with ``trial.report(value, step)`` and
stops when ERAHBO's pruner says so: after ``k_min`` seeds as soon as the configuration is
certified worse than the incumbent in mean-variance terms, at ``k_max`` at the latest. Returns
are divided by 500 (CartPole's maximum) so that ``alpha`` weighs a variance on the 0..1 scale.
The study lives in ``sb3_ppo_cartpole.db``: run the script again to continue it. At the end
it prints the recommended configuration, ``argmax LCB_MV`` (not ``study.best_trial``, which
ranks by the mean the objective returns).
"""

from __future__ import annotations

import os

# One thread per PPO run, set before torch is imported (stable_baselines3 imports it): torch's
# default thread pool oversubscribes a small machine and slows small networks down badly.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse

import optuna

from erahbo.integrations.optuna import ERAHBOSampler, recommended_trial, trial_seeds

SCALE = 500.0  # CartPole-v1's maximum return


def train_ppo(params: dict, seed: int, timesteps: int) -> float:
    """Train PPO with ``params`` and ``seed``; the mean return of 10 evaluation episodes."""
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)

    env = gym.make("CartPole-v1")
    model = PPO(
        "MlpPolicy", env, seed=seed, verbose=0, device="cpu",
        learning_rate=params["learning_rate"], n_steps=params["n_steps"],
        batch_size=params["batch_size"], gamma=params["gamma"],
        gae_lambda=params["gae_lambda"], clip_range=params["clip_range"],
        ent_coef=params["ent_coef"], n_epochs=params["n_epochs"],
        policy_kwargs={"net_arch": [params["width"]] * 2},
    )
    model.learn(total_timesteps=timesteps)
    eval_env = gym.make("CartPole-v1")
    eval_env.reset(seed=10_000 + seed)
    mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=10, deterministic=True)
    return float(mean)


def make_objective(timesteps: int, k_max: int):
    def objective(trial: optuna.Trial) -> float:
        params = {
            "learning_rate": trial.suggest_float("learning_rate", 1e-5, 1e-2, log=True),
            "n_steps": trial.suggest_categorical("n_steps", [128, 256, 512, 1024, 2048]),
            "batch_size": trial.suggest_categorical("batch_size", [32, 64, 128, 256]),
            "gamma": trial.suggest_float("gamma", 0.9, 0.9999, log=True),
            "gae_lambda": trial.suggest_float("gae_lambda", 0.8, 1.0),
            "clip_range": trial.suggest_float("clip_range", 0.1, 0.4, step=0.1),
            "ent_coef": trial.suggest_float("ent_coef", 1e-8, 0.1, log=True),
            "n_epochs": trial.suggest_int("n_epochs", 3, 20),
            "width": trial.suggest_categorical("width", [32, 64, 128]),
        }
        returns = []
        for step, seed in enumerate(trial_seeds(trial)):  # at most k_max, never repeated
            returns.append(train_ppo(params, seed=seed, timesteps=timesteps) / SCALE)
            trial.report(returns[-1], step)
            if trial.should_prune():  # ERAHBO's stopping rule rejected the configuration
                raise optuna.TrialPruned()
        return sum(returns) / len(returns)

    return objective


def main() -> None:
    ap = argparse.ArgumentParser(description="ERAHBO + Optuna on SB3 PPO CartPole")
    ap.add_argument("--trials", type=int, default=30, help="configurations to train")
    ap.add_argument("--timesteps", type=int, default=30_000, help="PPO steps per seed")
    ap.add_argument("--alpha", type=float, default=1.0, help="risk aversion")
    ap.add_argument("--k-max", type=int, default=10, help="most seeds per configuration")
    ap.add_argument("--storage", default="sqlite:///sb3_ppo_cartpole.db")
    args = ap.parse_args()

    sampler = ERAHBOSampler(alpha=args.alpha, k_min=2, k_max=args.k_max, n_init=5, seed=0)
    study = optuna.create_study(
        direction="maximize", sampler=sampler, pruner=sampler.pruner,
        storage=args.storage, study_name="sb3_ppo_cartpole", load_if_exists=True,
    )
    study.optimize(make_objective(args.timesteps, args.k_max), n_trials=args.trials)

    seeds = [len(t.intermediate_values) for t in study.trials]
    print(f"{len(study.trials)} configurations, {sum(seeds)} PPO runs; seeds per "
          f"configuration: {seeds}")
    print("recommended (argmax LCB_MV):", recommended_trial(study).params)
    configs = sampler.result(study).configs
    print(configs.sort_values("mean", ascending=False).head(10).to_string())


if __name__ == "__main__":
    main()
