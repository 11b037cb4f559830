"""The three-step flow of bench_vs_locust.py as a Locust user does it, once with each of
Locust's clients: a task is a session (log in, then two GETs with the token)."""

from locust import FastHttpUser, HttpUser, constant, task


class ThreeStepsFast(FastHttpUser):
    wait_time = constant(0)

    @task
    def session(self) -> None:
        r = self.client.post("/login", json={"user": "u1", "pw": "x"}, name="login")
        auth = {"Authorization": f"Bearer {r.text}"}
        self.client.get("/items", headers=auth)
        self.client.get("/items/1", headers=auth, name="item")


class ThreeStepsRequests(HttpUser):
    wait_time = constant(0)

    @task
    def session(self) -> None:
        r = self.client.post("/login", json={"user": "u1", "pw": "x"}, name="login")
        auth = {"Authorization": f"Bearer {r.text}"}
        self.client.get("/items", headers=auth)
        self.client.get("/items/1", headers=auth, name="item")
