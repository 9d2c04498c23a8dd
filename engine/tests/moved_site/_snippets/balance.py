def balanced(wing_weights):
    """날개 무게가 모두 같으면 참입니다."""
    return max(wing_weights) - min(wing_weights) < 0.5


print(balanced([3.1, 3.0, 3.2, 3.1]))
