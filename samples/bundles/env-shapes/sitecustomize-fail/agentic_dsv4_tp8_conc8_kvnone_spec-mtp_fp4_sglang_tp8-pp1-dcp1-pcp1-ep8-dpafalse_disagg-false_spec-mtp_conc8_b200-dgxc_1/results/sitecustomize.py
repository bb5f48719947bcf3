import os
os.environ["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"] = "true"
